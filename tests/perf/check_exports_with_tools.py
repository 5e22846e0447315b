#!/usr/bin/env python3
"""Local check of gpucal's exports with each modeling tool's own code (not run in CI: the tools
are fetched for local use only). For one results folder it exports for all four tools, then

  Calculon   runs a full `calculon llm` (megatron-126M on the measured node, every group on
             tier 0) and asks its System for one allreduce and one GEMM;
  NERSC      builds a Linear layer and times one allreduce / allgather with its Estimates, and
             runs its 1D execution search (execute_1d) on the measured node;
  ASTRA-sim  simulates one allreduce and one GEMM (a compute node, roofline) with the analytical
             congestion-unaware backend; the Chakra ETs are written with ASTRA-sim's own protobuf
             schema and encoder, as its generator scripts do, plus pg_name = "" (the default
             communicator): at c0cf6d6 an ET node without pg_name aborts ("Attribute pg_name not
             found"), its shipped examples included;
  vTrain     loads the LUTs with its get_allreduce_LUT and times one allreduce with compute_comm_time;

and prints our measured value beside each tool's prediction. A tool whose checkout is not given
(--calculon, --astrasim, --nersc, --vtrain) is skipped. The measured allreduce is the
intra-node group with the most ranks at the measured size closest to --size; the GEMM is the
export's reference GEMM (the fastest shape longer than 40 us).

vTrain's predictor imports apex and vtrain_profiler (CUDA-only: its kernel profiler); they are
replaced by empty stand-ins that the LUT loader never calls. Python: Debian's python3 with
python3-numpy, -pandas, -psutil, -torch, -protobuf, -matplotlib.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROWS = []


def row(tool, what, measured, predicted, unit="us"):
    ratio = predicted / measured if measured else float("nan")
    ROWS.append((tool, what, measured, predicted, ratio, unit))
    print(f"  {tool:9s} {what:58s} measured {measured:14.2f} {unit}  predicted {predicted:14.2f} {unit}  "
          f"ratio {ratio:.4f}", flush=True)


def run(cmd, cwd=None, env=None, check=True):
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
    return p


def measured_allreduce(calib, size_hint):
    groups = [g for g in calib["communication"]["collectives"]
              if g["collective"] == "allreduce" and g["spans_nodes"] == 0]
    g = max(groups, key=lambda g: (g["nranks"], len(g["points"])))
    p = min(g["points"], key=lambda p: abs(p["size_bytes"] - size_hint))
    return g["nranks"], p["size_bytes"], p["time_us_median"]


def measured_collective(calib, name, nranks, size):
    for g in calib["communication"]["collectives"]:
        if g["collective"] == name and g["nranks"] == nranks and g["spans_nodes"] == 0:
            for p in g["points"]:
                if p["size_bytes"] == size:
                    return p["time_us_median"]
    return None


def reference_gemm(calib):
    gemm = calib["compute"]["gemm"]
    dtype = next((d for d in ("bf16", "fp16") if d in gemm), next(iter(gemm)))
    shapes = [dict(s, time_us=s["gflop"] * 1e3 / s["tflops"]) for s in gemm[dtype]["by_shape"]]
    long_enough = [s for s in shapes if s["time_us"] >= 40.0] or shapes
    return dtype, max(long_enough, key=lambda s: s["tflops"])


def check_calculon(root, out, calib, nranks, size, t_ar, dtype, g):
    print("\n== Calculon", flush=True)
    cdtype = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}[dtype]
    exe = {"num_procs": nranks, "tensor_par": nranks, "pipeline_par": 1, "data_par": 1, "tensor_par_net": 0,
           "pipeline_par_net": 0, "data_par_net": 0, "batch_size": 8, "microbatch_size": 1, "datatype": cdtype,
           "fused_activation": True, "attention_type": "multihead", "activation_recompute": "none",
           "pipeline_interleaving": 1, "optimizer_sharding": False, "tensor_par_comm_type": "ar",
           "tensor_par_overlap": "none", "seq_par_ag_redo": False, "data_par_overlap": False,
           "weight_offload": False, "activations_offload": False, "optimizer_offload": False, "training": True}
    exe_path = os.path.join(out, "calculon_execution.json")
    with open(exe_path, "w") as f:
        json.dump(exe, f, indent=2)
    env = dict(os.environ, PYTHONPATH=root)
    p = run(["/usr/bin/python3", os.path.join(root, "bin", "calculon"), "llm", os.path.join(root, "models", "megatron-126M.json"),
             exe_path, os.path.join(out, "calculon", "system.json"), os.path.join(out, "calculon_llm_stats.json")], env=env)
    with open(os.path.join(out, "calculon_llm_stats.json")) as f:
        stats = json.load(f)
    keys = ("block_fw_time", "batch_fw_time", "batch_bw_time", "batch_tp_comm_time", "batch_total_time",
            "sample_rate", "proc_mem_tier1_cap_req", "total_efficiency")
    print("  calculon llm:", json.dumps({k: v for k, v in stats.items() if k in keys} or dict(list(stats.items())[:12])))
    code = f"""
import json, sys
from calculon import System
s = System(json.load(open({json.dumps(os.path.join(out, "calculon", "system.json"))})))
s.set_datatype({cdtype!r})
net = s.get_network(0)
flops = 2.0 * {g['m']} * {g['n']} * {g['k']} * {g['batch']}
print(json.dumps({{"allreduce_s": net.time("all_reduce", {size}, {nranks}), "gemm_s": flops / s.get_matrix_throughput(flops)}}))
"""
    pred = json.loads(run(["/usr/bin/python3", "-c", code], env=env).stdout.strip().splitlines()[-1])
    row("Calculon", f"allreduce {nranks} ranks {int(size)} B (Network.time)", t_ar, pred["allreduce_s"] * 1e6)
    row("Calculon", f"GEMM {g['m']}x{g['n']}x{g['k']} {dtype} (matrix throughput)", g["time_us"], pred["gemm_s"] * 1e6)


def check_nersc(root, out, calib, nranks, size, t_ar, dtype, g, gpucal, results, sets):
    print("\n== NERSC transformer-perf-estimates", flush=True)
    ar_out = os.path.join(out, "nersc_allreduce")
    run([gpucal, "export", results, "--to", "nersc", "--out", ar_out] + sets + ["--set", "nersc_comm_op=allreduce"])
    t_ag = measured_collective(calib, "allgather", nranks, size)
    t_rs = measured_collective(calib, "reduce_scatter", nranks, size)
    code = f"""
import json
from estimates import Estimates
from layers import Linear
from execution import execute_1d
out = {{}}
for name, path in (("ag", {json.dumps(os.path.join(out, "nersc", "system.json"))}),
                   ("ar", {json.dumps(os.path.join(ar_out, "nersc", "system.json"))})):
    system = json.load(open(path))
    e = Estimates(system)
    out[name + "_allreduce_s"] = e.get_time_comm({size} / 1e9, {nranks}, "allreduce", {nranks})
    out[name + "_allgather_s"] = e.get_time_comm({size} / 1e9, {nranks}, "allgather", {nranks})
    out[name + "_reducescatter_s"] = e.get_time_comm({size} / 1e9, {nranks}, "reducescatter", {nranks})
system = json.load(open({json.dumps(os.path.join(out, "nersc", "system.json"))}))
lin = Linear("gemm", {g['batch']}, {g['m']}, {g['k']}, {g['n']}, parallelism={{"dim1": 1, "dim2": 1}},
             topology={{"t1": 1, "t2": 1}}, system=system)
lin.compute_time()
out["gemm_s"] = lin.get_stats()["t_fwd"]
model = {{"l": 512, "e": 768, "h": 16, "depth": 12}}
model["f"] = 4 * model["e"]
configs = execute_1d(model, [{nranks}], global_batch_size=8, system=system, verbose=False, nlargest=3)
best = configs[0][0]
out["estimate"] = {{"throughput_samples_per_s": best[0], "memory_GB": best[1], "config": best[2],
                   "time_s": 8 / best[0]}}
print(json.dumps(out))
"""
    p = run(["/usr/bin/python3", "-c", code], cwd=root)
    pred = json.loads(p.stdout.strip().splitlines()[-1])
    print("  execute_1d (GPT l=512 e=768 h=16 depth=12, batch 8 on", nranks, "GPUs):", json.dumps(pred["estimate"]))
    if t_ag:
        row("NERSC", f"allgather {nranks} ranks {int(size)} B (default export)", t_ag, pred["ag_allgather_s"] * 1e6)
    if t_ag and t_rs:
        row("NERSC", f"allgather + reduce-scatter {nranks} ranks {int(size)} B (default export)", t_ag + t_rs,
            (pred["ag_allgather_s"] + pred["ag_reducescatter_s"]) * 1e6)
    row("NERSC", f"allreduce {nranks} ranks {int(size)} B (default export)", t_ar, pred["ag_allreduce_s"] * 1e6)
    row("NERSC", f"allreduce {nranks} ranks {int(size)} B (nersc_comm_op=allreduce)", t_ar,
        pred["ar_allreduce_s"] * 1e6)
    row("NERSC", f"GEMM {g['m']}x{g['n']}x{g['k']} {dtype} (Linear layer t_fwd)", g["time_us"], pred["gemm_s"] * 1e6)


def write_et(root, path, attrs, node_type):
    """One Chakra ET node, written with ASTRA-sim's schema (et_def_pb2) and encoder (protolib)."""
    lines = []
    for name, kind, value in attrs:  # value: Python source, so schema constants can be named
        lines.append(f"node.attr.append(ChakraAttr(name={name!r}, {kind}={value}))")
    code = f"""
import sys
sys.path.insert(0, {json.dumps(root)})
from extern.graph_frontend.chakra.schema.protobuf import et_def_pb2 as pb
from extern.graph_frontend.chakra.schema.protobuf.et_def_pb2 import AttributeProto as ChakraAttr
from extern.graph_frontend.chakra.src.third_party.utils.protolib import encodeMessage as encode_message
with open({json.dumps(path)}, "wb") as et:
    encode_message(et, pb.GlobalMetadata(version="0.0.4"))
    node = pb.Node()
    node.id = 0
    node.name = "gpucal_check"
    node.type = pb.{node_type}
    node.attr.append(ChakraAttr(name="is_cpu_op", bool_val=False))
""" + "\n".join("    " + l for l in lines) + "\n    encode_message(et, node)\n"
    run(["/usr/bin/python3", "-c", code])


def astrasim_cycles(root, out, workload, npus_hint):
    root, out, workload = (os.path.abspath(p) for p in (root, out, workload))
    binary = os.path.join(root, "build", "astra_analytical", "build", "bin", "AstraSim_Analytical_Congestion_Unaware")
    # ASTRA-sim writes log/log.log and log/err.log into its working folder: keep them in `out`.
    p = run(cwd=out, cmd=[binary, f"--workload-configuration={workload}",
             f"--system-configuration={os.path.join(out, 'astrasim', 'system.json')}",
             f"--network-configuration={os.path.join(out, 'astrasim', 'network.yml')}",
             f"--remote-memory-configuration={os.path.join(root, 'examples', 'remote_memory', 'analytical', 'no_memory_expansion.json')}"])
    text = p.stdout + p.stderr
    cycles = [int(c) for c in re.findall(r"sys\[\d+\] finished, (\d+) cycles", text)]
    if not cycles:
        sys.exit("ASTRA-sim printed no finish line:\n" + text[-3000:])
    print("  " + "\n  ".join(l for l in text.splitlines() if "finished" in l)[:600])
    return max(cycles)


def check_astrasim(root, out, calib, nranks, size, t_ar, dtype, g, gpucal, results, sets):
    print("\n== ASTRA-sim (analytical, congestion unaware)", flush=True)
    # The measured group is one node: simulate a one-node system (no inter-node tier by hand).
    one_node = []
    for i in range(0, len(sets), 2):
        if not sets[i + 1].startswith(("inter_busbw_gbps=", "inter_alpha_us=", "nodes=")):
            one_node += sets[i:i + 2]
    out = os.path.join(out, "astrasim_one_node")
    run([gpucal, "export", results, "--to", "astrasim", "--out", out] + one_node)
    with open(os.path.join(out, "astrasim", "network.yml")) as f:
        print("  network.yml: " + " | ".join(l.strip() for l in f if not l.startswith("#")))
    work = tempfile.mkdtemp(prefix="astrasim_check_", dir=out)
    ar_dir = os.path.join(work, "all_reduce")
    os.makedirs(ar_dir)
    for npu in range(nranks):
        write_et(root, os.path.join(ar_dir, f"all_reduce.{npu}.et"),
                 [("comm_type", "int64_val", "pb.ALL_REDUCE"), ("comm_size", "int64_val", str(int(size))),
                  ("pg_name", "string_val", "''")], "COMM_COLL_NODE")
    cycles = astrasim_cycles(root, out, os.path.join(ar_dir, "all_reduce"), nranks)
    row("ASTRA-sim", f"allreduce {nranks} ranks {int(size)} B (simulated, 1 cycle = 1 ns)", t_ar, cycles / 1e3)
    # One GEMM: a compute node per NPU; the roofline gives num_ops / min(bw·intensity, peak).
    elem = {"bf16": 2, "fp16": 2, "fp32": 4}[dtype]
    flops = 2.0 * g["m"] * g["n"] * g["k"] * g["batch"]
    tensor_bytes = elem * g["batch"] * (g["m"] * g["k"] + g["k"] * g["n"] + g["m"] * g["n"])
    comp_dir = os.path.join(work, "gemm")
    os.makedirs(comp_dir)
    for npu in range(nranks):
        write_et(root, os.path.join(comp_dir, f"gemm.{npu}.et"),
                 [("num_ops", "int64_val", str(int(flops))), ("tensor_size", "uint64_val", str(int(tensor_bytes)))],
                 "COMP_NODE")
    cycles = astrasim_cycles(root, out, os.path.join(comp_dir, "gemm"), nranks)
    row("ASTRA-sim", f"GEMM {g['m']}x{g['n']}x{g['k']} {dtype} (compute node, roofline)", g["time_us"], cycles / 1e3)


def check_vtrain(root, out, calib, nranks, size, t_ar):
    print("\n== vTrain", flush=True)
    stub = tempfile.mkdtemp(prefix="vtrain_stubs_", dir=out)
    os.makedirs(os.path.join(stub, "apex"))
    for name, text in (("apex/__init__.py", ""),
                       ("apex/normalization.py", "FusedLayerNorm = MixedFusedLayerNorm = None\n"),
                       ("apex/multi_tensor_apply.py", "multi_tensor_applier = None\n"),
                       ("vtrain_profiler.py", "def init_trace(*a, **k):\n    raise RuntimeError('needs a GPU')\n"
                                              "timestamp = finish_trace = init_trace\n")):
        with open(os.path.join(stub, name), "w") as f:
            f.write(text)
    mib = int(round(size / 2**20))
    code = f"""
import json, sys
sys.path.insert(0, {json.dumps(stub)})
sys.path.insert(0, {json.dumps(root)})
from src.predictor import vTrain
from src.config import vTrainConfig
system = json.load(open({json.dumps(os.path.join(out, "vtrain", "system_config.json"))}))
model = dict(num_gpus={nranks}, tensor_parallel_size={nranks}, data_parallel_size=1, pipeline_parallel_size=1,
             global_batch_size=8, micro_batch_size=8, num_layers=12, hidden_size=768, num_attention_heads=16,
             max_length=1024)
sim = vTrain(vTrainConfig(**model, **system))
lut = sim.allreduce_LUT
print(json.dumps({{"gpu_counts": sorted(lut), "rows": {{str(n): len(lut[n]) for n in lut}},
                  "t_ns": sim.compute_comm_time({mib} * 2**20, {nranks})}}))
"""
    p = run(["/usr/bin/python3", "-c", code], cwd=root)
    lines = p.stdout.strip().splitlines()
    pred = json.loads(lines[-1])
    print("  loaded LUTs: GPU counts", pred["gpu_counts"], "rows", pred["rows"])
    row("vTrain", f"allreduce {nranks} ranks {mib} MiB (compute_comm_time)", t_ar, pred["t_ns"] / 1e3)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="gpucal results folder (with calibration.json or its CSVs)")
    ap.add_argument("--gpucal", required=True)
    ap.add_argument("--calculon", help="calculon-ai/calculon checkout (its check is skipped when not given)")
    ap.add_argument("--astrasim", help="astra-sim checkout with build/astra_analytical built (its check is skipped when not given)")
    ap.add_argument("--nersc", help="transformer-perf-estimates checkout (its check is skipped when not given)")
    ap.add_argument("--vtrain", help="vTrain checkout (its check is skipped when not given)")
    ap.add_argument("--out", required=True, help="folder for the exports and the tools' outputs")
    ap.add_argument("--size", type=float, default=32 * 2**20, help="allreduce size to compare (nearest measured)")
    ap.add_argument("--set", action="append", default=[], help="passed to gpucal export (KEY=VALUE)")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    args.results = os.path.abspath(args.results)
    os.makedirs(args.out, exist_ok=True)
    sets = [a for kv in args.set for a in ("--set", kv)]
    calib_path = os.path.join(args.out, "calibration.json")
    run([args.gpucal, "fit", args.results, "-o", calib_path])
    p = run([args.gpucal, "export", calib_path, "--to", "all", "--out", args.out] + sets, check=False)
    print(p.stdout)
    print(p.stderr)
    with open(calib_path) as f:
        calib = json.load(f)
    nranks, size, t_ar = measured_allreduce(calib, args.size)
    dtype, g = reference_gemm(calib)
    print(f"measured: allreduce {nranks} ranks {int(size)} B: {t_ar:.1f} us; GEMM {g['m']}x{g['n']}x{g['k']} {dtype}: "
          f"{g['time_us']:.1f} us ({g['tflops']} TFLOP/s)")
    # A refused export wrote nothing for its tool (the refusal is printed above): say so, check the rest.
    checks = [("Calculon", "calculon/system.json",
               lambda: check_calculon(args.calculon, args.out, calib, nranks, size, t_ar, dtype, g)),
              ("NERSC", "nersc/system.json",
               lambda: check_nersc(args.nersc, args.out, calib, nranks, size, t_ar, dtype, g, args.gpucal, calib_path,
                                   sets)),
              ("ASTRA-sim", "astrasim/network.yml",
               lambda: check_astrasim(args.astrasim, args.out, calib, nranks, size, t_ar, dtype, g, args.gpucal,
                                      calib_path, sets)),
              ("vTrain", "vtrain/system_config.json",
               lambda: check_vtrain(args.vtrain, args.out, calib, nranks, size, t_ar))]
    given = {"Calculon": args.calculon, "NERSC": args.nersc, "ASTRA-sim": args.astrasim, "vTrain": args.vtrain}
    for tool, needed, check in checks:
        if not given[tool]:
            print(f"\n== {tool}: skipped (no --{tool.lower().replace('-', '')} checkout given)")
        elif not os.path.exists(os.path.join(args.out, needed)):
            print(f"\n== {tool}: not checked: its export was refused ({needed} not written; the refusal is above)")
        elif tool == "vTrain" and size < 2**20:
            print(f"\n== vTrain: not checked: its tables start at 1 MiB and the allreduce compared is {int(size)} B "
                  f"(give --size)")
        else:
            check()
    print("\n| tool | quantity | measured | predicted | predicted / measured |")
    print("| --- | --- | --- | --- | --- |")
    for tool, what, m, pr, r, unit in ROWS:
        print(f"| {tool} | {what} | {m:.1f} {unit} | {pr:.1f} {unit} | {r:.4f} |")


if __name__ == "__main__":
    main()
