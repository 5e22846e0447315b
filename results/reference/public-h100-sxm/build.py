#!/usr/bin/env python3
"""Builds the public H100 SXM reference calibration from public measured tables.

    python3 results/reference/public-h100-sxm/build.py --gpucal build/app/gpucal --out DIR

Measured, imported with `gpucal import` (each row's status_detail and each sidecar source name
the repository, path and commit, from the fixture's own '# source:' line):
  - GEMM: XLA's H100 table (tests/fixtures/xla_tables/xla_matmul_sm90.txtpb), bf16, f32, fp8;
  - collectives within a node: XLA's H100 table (xla_collective_sm90.txtpb), groups of 2, 4, 8;
  - allreduce across nodes: nccl-tests on 2 HGX H100 nodes over NDR InfiniBand
    (tests/fixtures/comm_logs/nccl_h100_hgx_ib_2x8.log).
Then `gpucal fit`, and the figures no public table gives, each marked in calibration.json:
  - memory.device_bandwidth_gbps: published (expectations/h100_sxm.json's hbm_copy_gbps typical);
  - compute.gemm.<dtype>.peak_tflops: published (the same file's peaks);
  - compute.attention: derived, by the rule in ATTENTION_RULE, from gpucal's own H200 measurement.
calibration.json's `provenance` lists every section with its kind (measured, published, derived)
and source; nothing is left unmarked. Paths are written relative to the repository.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DEVICE = "NVIDIA H100 80GB HBM3"
INPUTS = ["tests/fixtures/xla_tables/xla_matmul_sm90.txtpb",
          "tests/fixtures/xla_tables/xla_collective_sm90.txtpb",
          "tests/fixtures/comm_logs/nccl_h100_hgx_ib_2x8.log"]
EXPECTATIONS = "expectations/h100_sxm.json"
H200 = "results/reference/nvidia-h200"
ATTENTION_RULE = (
    "H200's cuDNN attention TFLOP/s as measured by gpucal bench_attention (" + H200 + "/attention.csv, "
    "commit 1aa8c33), taken for the H100 SXM: both are the GH100 die with 132 SMs, the same tensor cores "
    "and the same 1980 MHz boost clock at 700 W; at head dim 128 and sequences of 512 and more the kernel "
    "is bound by the tensor cores, not by HBM (4.8 TB/s on H200, 3.35 on H100), so the H100's figure is "
    "at most this one")
OUTPUTS = ["calibration.json", "collectives.csv", "collectives.json", "gemm.csv", "gemm.json", "p2p.csv", "p2p.json"]
# bench_p2p's columns (results/SCHEMA.md), in its order.
P2P_COLUMNS = ("schema_version,bench,impl,backend,device,point,repetition,status,status_detail,regime,samples,"
               "launches_per_sample,combine,converged,stop_reason,sampling_time_s,time_us_median,time_us_p10,"
               "time_us_p90,time_us_min,time_us_max,time_us_mean,time_us_stdev,noise_rel,verified,max_rel_err,"
               "sm_clock_mhz,mem_clock_mhz,power_w,temp_c,throttle_reasons,suspect,process_run,pattern,direction,"
               "engine,src_rank,dst_rank,src_device,dst_device,src_node,dst_node,link_class,memory,size_bytes,"
               "bytes_counted,bytes_counted_rule,concurrent,bandwidth_gbps,peak_gbps,wrong,latency_us").split(",")
GEMM_DTYPES = {"bf16": "gemm_bf16_tflops", "fp8_e4m3": "gemm_fp8_tflops"}


def gpucal(binary, *args):
    done = subprocess.run([binary, *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("build.py: gpucal %s failed (exit %d):\n%s%s" % (" ".join(args), done.returncode,
                                                                 done.stdout, done.stderr))
    return done.stdout


def relative_paths(value, renames):
    """Each string with the paths in `renames` replaced (the scratch folder by the final one, the
    repository's root by nothing), so the folder names no machine's paths."""
    if isinstance(value, str):
        for old, new in renames:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [relative_paths(v, renames) for v in value]
    if isinstance(value, dict):
        return {k: relative_paths(v, renames) for k, v in value.items()}
    return value


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


P2P_RULE = (
    "XLA's all-gather over 2 GPUs of one node at S bytes (its table's sizes are the total over ranks): each "
    "GPU sends its S/2 to the other and receives the other's, the traffic of a sendrecv of S/2 each way at "
    "once, so the sendrecv's time at S/2 is the all-gather's at S")


def derived_p2p(out):
    """p2p.csv rows derived from XLA's 2-GPU all-gather rows (P2P_RULE), in bench_p2p's columns, and
    their sidecar; gpucal fit then makes the communication.p2p group."""
    with open(os.path.join(out, "collectives.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["collective"] == "allgather" and r["nranks"] == "2"
                and r["impl"] == "xla-table" and r["status"] == "ok"]
    if not rows:
        sys.exit("build.py: XLA's table gave no 2-GPU all-gather rows to derive p2p from")
    columns = P2P_COLUMNS
    with open(os.path.join(out, "p2p.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            total = float(r["size_bytes"])
            message, time = total / 2, float(r["time_us_median"])
            w.writerow({"schema_version": r["schema_version"], "bench": "p2p", "impl": "derived", "backend": "cuda",
                        "device": r["device"], "point": "p2p/derived/sendrecv/device/intra/%d" % message,
                        "status": "ok",
                        "status_detail": "derived from %s: %s" % (r["point"], r["status_detail"]),
                        "regime": "hot", "samples": "1", "time_us_median": r["time_us_median"],
                        "time_us_p10": r["time_us_p10"], "time_us_p90": r["time_us_p90"],
                        "time_us_mean": r["time_us_mean"], "verified": "skipped", "suspect": "", "process_run": "0",
                        "pattern": "sendrecv", "direction": "bi", "engine": "nccl", "src_rank": "0", "dst_rank": "1",
                        "src_device": "0", "dst_device": "1", "src_node": "node0", "dst_node": "node0",
                        "link_class": "intra-node", "memory": "device", "size_bytes": "%d" % message,
                        "bytes_counted": "%d" % total, "bytes_counted_rule": "both directions",
                        "concurrent": "1", "bandwidth_gbps": "%.7g" % (total / time / 1e3)})
    write_json(os.path.join(out, "p2p.json"), {
        "bench": "p2p", "csv_schema_version": 2, "metadata_schema_version": 1, "rows": len(rows), "failed_rows": 0,
        "exit_code": 0, "derived": {"rule": P2P_RULE, "from": "collectives.csv (XLA's 2-GPU all-gather rows)"}})


FP8_RULE = (
    "XLA's table times a dot by the median of every kernel it launches (matmul_perf_table_gen.cc's Profile: "
    "getMedianKernelTimeNs over all traced kernels). On Hopper an fp8 dot with a row-major right operand "
    "launches two, a transpose of that operand and the cuBLASLt GEMM (gemm_rewriter.cc, CreateF8CustomCall: "
    "'cuBLASLt requires the second operand to be column-major on non-Blackwell systems'; the generator's rhs "
    "is [b,k,n] with n minor), so the table's time t is the mean of the two middle kernels, (T + G) / 2. "
    "The GEMM's time is taken as G = 2t - T, with T the transpose reading and writing b*k*n bytes at the "
    "published HBM copy rate (its fixed launch cost left out, so G is if anything slow). The GEMMs ran with "
    "fast accumulation (cuda_blas_lt.cc, GetMatmulPlan: 'Use the fast accumulation mode if the compute "
    "precision is DEFAULT'; the generator's dot carries no precision), so the table's accumulation is 'fast': "
    "gpucal predict prices Transformer Engine's dgrad and wgrad GEMMs, which accumulate split, from it x1.15")
FP8_SOURCES = ("openxla/xla @ dc660322168302831d1cbc4c99683cd79671286e: xla/tools/matmul_perf_table_gen.cc, "
               "xla/service/gpu/transforms/gemm_rewriter.cc; openxla/xla @ 0ceef6a5b22331a56b5a8312d6775f5e6245007d: "
               "xla/stream_executor/cuda/cuda_blas_lt.cc")


def derived_fp8(out, hbm_gbps):
    """gemm.csv's fp8 rows re-timed by FP8_RULE, each marked derived (impl, status_detail)."""
    path = os.path.join(out, "gemm.csv")
    with open(path) as f:
        reader = csv.DictReader(f)
        columns, rows = reader.fieldnames, list(reader)
    changed = 0
    for r in rows:
        if not r["dtype"].startswith("fp8"):
            continue
        b, k, n = int(r["batch"] or 1), int(r["k"]), int(r["n"])
        table_us = float(r["time_us_median"])
        transpose_us = 2.0 * b * k * n / (hbm_gbps * 1e3)
        gemm_us = 2.0 * table_us - transpose_us
        for c in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_mean"):
            r[c] = "%.6g" % gemm_us
        r["tflops"] = "%.7g" % (float(r["flops"]) / gemm_us / 1e6)
        r["impl"] = "xla-table-derived"
        r["point"] = r["point"].replace("/xla-table/", "/xla-table-derived/")
        r["status_detail"] = ("derived: 2 x the table's %.4g us less a %.3g us transpose (FP8_RULE of build.py); %s"
                              % (table_us, transpose_us, r["status_detail"]))
        changed += 1
    if not changed:
        sys.exit("build.py: XLA's table gave no fp8 GEMM rows to re-time")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    sidecar = os.path.join(out, "gemm.json")
    with open(sidecar) as f:
        doc = json.load(f)
    doc["derived"] = {"rule": FP8_RULE, "sources": FP8_SOURCES,
                      "rows": "the %d fp8 rows (impl xla-table-derived, each status_detail says its figures)" % changed}
    write_json(sidecar, doc)


def derived_attention(binary, scratch):
    """compute.attention of gpucal's fit of the H200 attention rows, each entry marked derived."""
    os.makedirs(scratch)
    for name in ("attention.csv", "attention.json"):
        shutil.copy(os.path.join(REPO, H200, name), scratch)
    gpucal(binary, "fit", scratch)
    with open(os.path.join(scratch, "calibration.json")) as f:
        entries = json.load(f)["compute"]["attention"]
    if not entries:
        sys.exit("build.py: the H200 attention rows gave no compute.attention entry")
    for e in entries:
        e["derived"] = ATTENTION_RULE
        for point in e["by_seq"]:
            point["point"] = H200 + "/attention.csv " + point["point"]
            point["efficiency"] = None  # against the H200's peak; the H100 has its own
    return entries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gpucal", required=True, help="the gpucal executable")
    parser.add_argument("--out", required=True, help="results folder to write (absent, or holding only its outputs)")
    args = parser.parse_args()
    final = os.path.abspath(args.out)
    kept = {"README.md", "build.py"}  # the folder's own files; the rest is what this script writes
    if os.path.exists(final) and not set(os.listdir(final)) <= kept | set(OUTPUTS):
        sys.exit("build.py: --out %s holds files this script does not write: %s" % (
            args.out, ", ".join(sorted(set(os.listdir(final)) - kept - set(OUTPUTS)))))
    binary = os.path.abspath(args.gpucal)
    work = tempfile.mkdtemp(prefix="public-h100-sxm.")
    try:
        build(binary, os.path.join(work, "run"), final)
        os.makedirs(final, exist_ok=True)
        for name in OUTPUTS:
            shutil.copy(os.path.join(work, "run", name), os.path.join(final, name))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("wrote %s (%s)" % (args.out, ", ".join(OUTPUTS)))


def build(binary, out, final):
    gpucal(binary, "import", *[os.path.join(REPO, p) for p in INPUTS], "--device", DEVICE, "--out", out)
    derived_p2p(out)
    with open(os.path.join(REPO, EXPECTATIONS)) as f:
        expected = json.load(f)["metrics"]
    derived_fp8(out, expected["hbm_copy_gbps"]["typical"]["value"])
    gpucal(binary, "fit", out)
    cal_path = os.path.join(out, "calibration.json")
    with open(cal_path) as f:
        cal = json.load(f)

    provenance = []
    with open(os.path.join(out, "gemm.json")) as f:
        gemm_source = json.load(f)["sources"][0]["source_ref"]
    for dtype, table in sorted(cal["compute"]["gemm"].items()):
        if dtype.startswith("fp8"):
            provenance.append({"section": "compute.gemm." + dtype, "kind": "derived",
                               "source": gemm_source + "; " + FP8_SOURCES, "rule": FP8_RULE,
                               "via": "gemm.csv (gpucal import, then build.py)"})
        else:
            provenance.append({"section": "compute.gemm." + dtype, "kind": "measured",
                               "source": gemm_source, "via": "gemm.csv (gpucal import)"})
        metric = GEMM_DTYPES.get(dtype)
        if metric and "peak" in expected[metric]:
            table["peak_tflops"] = expected[metric]["peak"]["value"]
            table["peak_source"] = expected[metric]["peak"]["source"]
            provenance.append({"section": "compute.gemm.%s.peak_tflops" % dtype, "kind": "published",
                               "source": table["peak_source"], "via": EXPECTATIONS})
            if table["best_tflops"] > table["peak_tflops"]:
                provenance[-2]["note"] = (
                    "above the published dense peak: best %.0f TFLOP/s (%s) against %.0f, so not a physical "
                    "figure of this device (gpucal check fails it); predictions from it are optimistic"
                    % (table["best_tflops"], table["best_point"], table["peak_tflops"]))
    with open(os.path.join(out, "collectives.json")) as f:
        sources = {s["file"]: s["source_ref"] for s in json.load(f)["sources"]}
    for g in cal["communication"]["collectives"]:
        name = "communication.collectives %s %s n%d nodes%d" % (g["collective"], g["dtype"], g["nranks"], g["nnodes"])
        src = sorted({ref for ref in sources.values()
                      if ("nccl-tests" in ref) == (g["nnodes"] > 1)})
        provenance.append({"section": name, "kind": "measured", "source": "; ".join(src),
                           "via": "collectives.csv (gpucal import)"})
    for g in cal["communication"]["p2p"]:
        provenance.append({"section": "communication.p2p %s %s %s" % (g["pattern"], g["direction"], g["link_class"]),
                           "kind": "derived", "source": "collectives.csv (XLA's 2-GPU all-gather rows)",
                           "rule": P2P_RULE, "via": "p2p.csv (build.py)"})
    hbm = expected["hbm_copy_gbps"]["typical"]
    if cal.get("memory") is None:
        cal["memory"] = {}
    cal["memory"]["device_bandwidth_gbps"] = hbm["value"]
    cal["memory"]["device_bandwidth_source"] = "published: " + hbm["source"]
    provenance.append({"section": "memory.device_bandwidth_gbps", "kind": "published", "source": hbm["source"],
                       "via": EXPECTATIONS + " hbm_copy_gbps.typical"})
    with tempfile.TemporaryDirectory() as scratch:
        cal["compute"]["attention"] = derived_attention(binary, os.path.join(scratch, "h200"))
    provenance.append({"section": "compute.attention", "kind": "derived", "source": H200 + "/attention.csv",
                       "rule": ATTENTION_RULE})
    cal["provenance"] = provenance
    final_name = os.path.relpath(final, REPO) if final.startswith(REPO + "/") else os.path.basename(final)
    renames = [(out, final_name), (REPO + "/", "")]
    cal["results_dir"] = final_name
    # What the public tables do not give stays missing, said so; the fit's note on memory is
    # answered above.
    cal["missing"] = [m for m in cal.get("missing", []) if not m.startswith(("memory.", "compute.attention"))]
    write_json(cal_path, relative_paths(cal, renames))
    for name in os.listdir(out):
        if name.endswith(".json") and name != "calibration.json":
            with open(os.path.join(out, name)) as f:
                doc = json.load(f)
            write_json(os.path.join(out, name), relative_paths(doc, renames))
    print("provenance: %d entries (%s)" % (len(provenance), ", ".join(
        "%d %s" % (sum(p["kind"] == k for p in provenance), k) for k in ("measured", "published", "derived"))))


if __name__ == "__main__":
    main()
