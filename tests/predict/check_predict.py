#!/usr/bin/env python3
"""gpucal predict end to end on the host: measures a shrunk Llama-3 8B layer with --model
(bench_gemm, bench_attention, bench_memory; with --mpirun a two-rank collectives sweep for the
communication model), then checks predict.json against the CSVs by its own arithmetic:
  - at the measured layout every op is `measured` and its time per call is the time_us_median
    of the CSV row its sources name; the step (pp = 1, overlap none) is the sum over ops of
    time x calls_per_step, and tokens/s = global_batch x seq / step;
  - at TP = 2 (shapes not measured) GEMMs come from the calibration tables (interpolated or
    extrapolated, never measured) and the TP messages from the communication model;
  - --sweep ranks layouts by step time, complete ones before those that left operations out
    (--allow-missing, each listing them); a layout nothing can cost is an error (exit 1, one line);
  - flags that would be ignored, empty or zero values, values out of bounds: exit 2, one line.
usage: check_predict.py --bin-dir DIR --gpucal PATH --work DIR [--mpirun CMD]"""
import argparse
import csv
import json
import os
import shlex
import shutil
import subprocess
import sys

MODEL = ["--model", "llama3-8b", "--seq", "128", "--micro-batch", "1", "--scale", "16", "--layers", "1"]
FAST = ["--backend", "host", "--quiet", "--max-time-per-point", "0.05", "--warmup-time", "0", "--min-samples", "3"]


def run(cmd, expect_rc=0):
    # This checks the arithmetic on rows measured while other tests run: rows a busy machine
    # flagged suspect are used, not left out.
    if len(cmd) > 1 and cmd[1] == "predict":
        cmd = cmd + ["--allow-suspect"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    if p.returncode != expect_rc:
        sys.exit(f"FAIL: {shlex.join(cmd)} exited {p.returncode} (expected {expect_rc})\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    # The note that suspect rows were used is not the output under test.
    p.stderr = "".join(l for l in p.stderr.splitlines(True) if "suspect timings used" not in l)
    return p


def close(a, b, rel=1e-9):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--gpucal", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpirun")
    a = ap.parse_args()
    res = os.path.join(a.work, "results")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(res)
    for bench in ("gemm", "attention", "memory"):
        run([os.path.join(a.bin_dir, f"bench_{bench}", f"bench_{bench}")] + MODEL + FAST +
            ["--out", os.path.join(res, f"{bench}.csv")])

    # 1. The measured layout: every op measured, the step is the plain sum.
    out = os.path.join(a.work, "tp1.json")
    run([a.gpucal, "predict", res] + MODEL + ["--output", out])
    doc = json.load(open(out))
    rows = {}
    for bench in ("gemm", "attention", "memory"):
        with open(os.path.join(res, f"{bench}.csv"), newline="") as f:
            for i, r in enumerate(csv.DictReader(f)):
                rows[(bench, r["point"])] = float(r["time_us_median"])
    total = 0.0
    for op in doc["ops"]:
        if op["provenance"] != "measured":
            sys.exit(f"FAIL: {op['op_role']} is {op['provenance']} at the measured layout")
        point = op["sources"][0].split(" ", 1)[1]
        if not close(op["time_us_per_call"], rows[(op["bench"], point)]):
            sys.exit(f"FAIL: {op['op_role']}: {op['time_us_per_call']} us is not its row's {rows[(op['bench'], point)]}")
        total += op["time_us_per_call"] * 1e-6 * op["calls_per_step"]
    b = doc["breakdown"]
    if not close(b["step"]["time_s"], total) or b["step"]["provenance"] != "measured":
        sys.exit(f"FAIL: step {b['step']} is not the sum of the ops {total}")
    if b["bubble"]["time_s"] != 0:
        sys.exit("FAIL: a bubble without a pipeline")
    tokens = doc["facts"]["global_batch"] * doc["facts"]["seq"]
    if not close(b["tokens_per_s"], tokens / total):
        sys.exit(f"FAIL: tokens/s {b['tokens_per_s']} != {tokens / total}")
    comp = sum(b["compute"][c]["time_s"] for c in ("gemm", "attention", "memory"))
    if not close(comp, total):
        sys.exit("FAIL: compute parts do not add up")
    print(f"ok: tp=1 step {total * 1e3:.3f} ms = sum of {len(doc['ops'])} measured ops")

    # --measure-step: refused without bench_step's row, then compared with it.
    p = run([a.gpucal, "predict", res] + MODEL + ["--measure-step", "--output", out], 1)
    if "--measure-step: no ok row" not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
        sys.exit(f"FAIL: --measure-step without step.csv: {p.stderr!r}")
    run([os.path.join(a.bin_dir, "bench_step", "bench_step")] + MODEL + FAST + ["--out", os.path.join(res, "step.csv")])
    run([a.gpucal, "predict", res] + MODEL + ["--measure-step", "--output", out])
    m = json.load(open(out))["measured_step"]
    with open(os.path.join(res, "step.csv"), newline="") as f:
        step_row = list(csv.DictReader(f))[-1]
    if m["roles_skipped"] or not close(m["time_s_median"], float(step_row["time_us_median"]) * 1e-6):
        sys.exit(f"FAIL: measured_step {m} is not step.csv's row")
    if step_row["verified"] != "ok" or int(step_row["launches"]) != sum(op["calls_per_step"] for op in doc["ops"]):
        sys.exit("FAIL: bench_step did not run every op of the step, verified")
    if not close(m["predicted_s"], total) or not close(m["predicted_over_measured"], total / m["time_s_median"]):
        sys.exit(f"FAIL: predicted {m['predicted_s']} / measured is not the ops' sum {total}")
    print(f"ok: --measure-step predicted / measured = {m['predicted_over_measured']:.3f} (tiny model, loaded host)")

    # Flags that would be ignored or read as the default, and values out of their bounds: one
    # line, exit 2 (once: a negative step time, the model's own seq, the default --output ...).
    bad = {
        ("--micro-batch", "9223372036854775807"): "--micro-batch: expected at most 1048576",
        ("--dp", "4611686018427387904"): "--dp: expected at most 1048576",
        ("--seq", "0"): "--seq: expected a sequence length of at least 1",
        ("--global-batch", "0"): "--global-batch: expected an integer from 1",
        ("--dtype", ""): "--dtype with --model: expected bf16, fp16, fp32, fp8 or auto, got ''",
        ("--dtype", "fp4"): "--dtype with --model: expected bf16, fp16, fp32, fp8 or auto, got 'fp4'",
        ("--grad-dtype", ""): "--grad-dtype: expected a value, got ''",
        ("--output", ""): "--output: expected a path, got ''",
        ("--virtual-stages", "2"): "--virtual-stages needs --schedule interleaved",
        ("--tp", "2", "--sweep", "tp=1,2"): "--sweep tp=1,2: --tp is given too",
        ("--sweep", "tp=1,2", "tp=4"): "--sweep: key 'tp' given twice",
        ("--sweep", "global-batch=1", "global_batch=2"): "--sweep: key 'global-batch' given twice",
        ("--sweep", "tp=1,1"): "--sweep tp=1,1: 1 is listed twice",
        ("--sweep", "dp=0,1"): "--sweep dp=0: expected at least 1",
    }
    def model_with(flags):  # MODEL with these flags' values replacing its own
        base = list(MODEL)
        rest = list(flags)
        if rest and rest[0] in base:
            base[base.index(rest[0]) + 1] = rest[1]
            rest = rest[2:]
        return base + rest
    for flags, text in bad.items():
        cmd = [a.gpucal, "predict", res] + model_with(flags) + ["--allow-missing"]
        if "--output" not in flags:
            cmd += ["--output", os.path.join(a.work, "bad.json")]
        p = run(cmd, 2)
        if text not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
            sys.exit(f"FAIL: {shlex.join(flags)}: expected one line with {text!r}, got {p.stderr!r}")
    if os.path.exists(os.path.join(res, "predict.json")) or os.path.exists(os.path.join(a.work, "bad.json")):
        sys.exit("FAIL: a refused predict wrote a file")
    for flag in ("--model", "--model-config"):  # the benches share the flags (ModelFlags)
        p = run([os.path.join(a.bin_dir, "bench_gemm", "bench_gemm"), "--backend", "host", flag, "", "--list"], 2)
        if f"{flag}: expected a value, got ''" not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
            sys.exit(f"FAIL: bench_gemm {flag} '': {p.stderr!r}")
    # A bad flag is refused before the folder is read: a folder whose rows draw warnings (a
    # suspect timing) still gets the one line alone.
    noisy = os.path.join(a.work, "noisy")
    shutil.rmtree(noisy, ignore_errors=True)
    shutil.copytree(res, noisy)
    with open(os.path.join(noisy, "gemm.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["suspect"] = "preempted (made here)"
    with open(os.path.join(noisy, "gemm.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    def bare(cmd):  # without run()'s --allow-suspect: the warning is the point
        return subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    warned = bare([a.gpucal, "predict", noisy] + MODEL + ["--allow-missing", "--output", os.path.join(a.work, "n.json")])
    p = bare([a.gpucal, "predict", noisy] + model_with(("--seq", "0")))
    if ("suspect timings left out" not in warned.stderr or p.returncode != 2 or len(p.stderr.strip().splitlines()) != 1
            or "--seq" not in p.stderr):
        sys.exit(f"FAIL: a bad flag on a folder that warns: {p.stderr!r} (the folder's warnings: {warned.stderr!r})")
    print(f"ok: {len(bad) + 3} ignored, empty, zero or out-of-bound flags refused (exit 2, one line)")
    # Every GEMM row suspect (a loaded machine) and no calibration to fall back on: the refusal says
    # the rows were left out and how to use them, not only "measure it".
    for r in rows:
        r["suspect"] = "preempted (made here)"
    with open(os.path.join(noisy, "gemm.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    if os.path.exists(os.path.join(noisy, "calibration.json")):
        os.remove(os.path.join(noisy, "calibration.json"))
    p = bare([a.gpucal, "predict", noisy] + MODEL + ["--output", os.path.join(a.work, "s.json")])
    if p.returncode != 1 or "suspect rows were left out: pass --allow-suspect to use them" not in p.stderr:
        sys.exit(f"FAIL: every GEMM row suspect: exit {p.returncode}, {p.stderr!r}")
    print("ok: a step refused for want of the suspect rows left out names --allow-suspect")

    # A sweep with --allow-missing before any communication data: tp=2 leaves its TP messages
    # out, so its step lacks them; it ranks after the complete tp=1 and lists what it left out.
    out = os.path.join(a.work, "sweep_missing.json")
    p = run([a.gpucal, "predict", res] + MODEL + ["--allow-missing", "--sweep", "tp=1,2", "zero=0,1", "--output", out])
    sw = json.load(open(out))
    ranked = sw["ranked"]
    complete = [r for r in ranked if r.get("complete") is True]
    incomplete = [r for r in ranked if r.get("complete") is False]
    if len(ranked) != 4 or len(complete) != 2 or len(incomplete) != 2 or ranked[:2] != complete:
        sys.exit(f"FAIL: complete layouts do not rank first: {[(r['layout']['tp'], r.get('complete')) for r in ranked]}")
    if any(r["missing"] for r in complete) or any(r["layout"]["tp"] != 1 for r in complete):
        sys.exit("FAIL: the complete layouts are not the tp=1 ones, or list left-out ops")
    if any(not r["missing"] or not all("tp_" in m for m in r["missing"]) for r in incomplete):
        sys.exit(f"FAIL: an incomplete layout does not list its left-out TP messages: {incomplete}")
    if any(r["layout"]["global_batch"] != 1 or r["layout"]["seq"] != 128 for r in ranked):
        sys.exit("FAIL: ranked layouts carry the unresolved global_batch/seq")
    rows = [l for l in p.stdout.splitlines() if l[:4].strip().isdigit()]
    labels = [l[6:].split("   ")[0] for l in rows]
    if len(set(labels)) != 4 or not all("zero=" in l and "gb=1" in l for l in labels):
        sys.exit(f"FAIL: sweep rows do not show the swept keys: {labels}")
    if p.stdout.count("left out: collectives tp_") < 2 or "*" not in rows[2][:6]:
        sys.exit(f"FAIL: the console does not mark and list the incomplete layouts:\n{p.stdout}")
    # An incomplete layout's step lacks operations: no tokens/s or MFU is read from it.
    if any(r["breakdown"].get("tokens_per_s") is not None or r["breakdown"].get("mfu") is not None
           or "incomplete" not in r["breakdown"] for r in incomplete):
        sys.exit(f"FAIL: an incomplete layout carries tokens/s or MFU: {[r['breakdown'] for r in incomplete]}")
    if any(r["breakdown"].get("tokens_per_s") is None for r in complete):
        sys.exit("FAIL: a complete layout lost its tokens/s")
    if any(rows[i].count("n/a") < 2 for i in (2, 3)):
        sys.exit(f"FAIL: the console prints a throughput for an incomplete layout:\n{p.stdout}")
    print("ok: sweep ranks complete layouts first; incomplete ones list what they left out")

    # 2. Another layout: GEMMs from the tables; messages need a communication model.
    if a.mpirun:
        run(shlex.split(a.mpirun) + [os.path.join(a.bin_dir, "bench_collectives", "bench_collectives"),
             "--collective", "allreduce,allgather,reduce_scatter", "--dtype", "fp32", "--sizes", "4K:1M:x4"] + FAST +
            ["--out", os.path.join(res, "collectives.csv")])
        out = os.path.join(a.work, "tp2.json")
        run([a.gpucal, "predict", res] + MODEL + ["--tp", "2", "--sp", "--output", out])
        doc = json.load(open(out))
        prov = {}
        for op in doc["ops"]:
            prov.setdefault(op["bench"], set()).add(op["provenance"])
            if not op["sources"] or not op["method"]:
                sys.exit(f"FAIL: {op['op_role']} without its sources")
        if "measured" in prov["gemm"] and len(prov["gemm"]) == 1:
            sys.exit("FAIL: tp=2 GEMMs were never measured, yet all say measured")
        if "collectives" not in prov:
            sys.exit("FAIL: no TP messages at tp=2")
        comm = doc["breakdown"]["communication"]["tp"]
        total = sum(op["time_s_per_step"] for op in doc["ops"])
        if not close(doc["breakdown"]["step"]["time_s"], total) or not comm["time_s"] > 0:
            sys.exit("FAIL: tp=2 step is not the sum of its ops")
        print(f"ok: tp=2 sp step {total * 1e3:.3f} ms, provenance {prov}")
        # overlap tp hides the TP messages under the GEMMs
        run([a.gpucal, "predict", res] + MODEL + ["--tp", "2", "--sp", "--overlap", "tp", "--output", out])
        hidden = json.load(open(out))["breakdown"]
        tp_pipeline = sum(op["time_s_per_step"] for op in doc["ops"]
                          if op.get("dimension") == "tp" and not op["per_step"])
        if not close(hidden["step"]["time_s"], total - min(tp_pipeline, hidden["compute"]["gemm"]["time_s"])):
            sys.exit("FAIL: --overlap tp did not hide min(tp, gemm)")
        # 3. The sweep ranks layouts by tokens/s, highest first (micro-batch 1 and 2: two global
        # batches, which the sweep says); at one global batch that is step time, fastest first.
        out = os.path.join(a.work, "sweep.json")
        unswept = MODEL[:MODEL.index("--micro-batch")] + MODEL[MODEL.index("--micro-batch") + 2:]
        p = run([a.gpucal, "predict", res] + unswept + ["--sweep", "tp=1,2", "micro-batch=1,2", "--output", out])
        ranked = json.load(open(out))["ranked"]
        rates = [r["breakdown"]["tokens_per_s"] for r in ranked]
        if len(ranked) != 4 or rates != sorted(rates, reverse=True):
            sys.exit(f"FAIL: sweep not ranked by tokens/s: {rates}")
        if "2 different global batches" not in p.stdout:
            sys.exit("FAIL: the sweep does not say its layouts run different global batches")
        run([a.gpucal, "predict", res] + unswept + ["--global-batch", "2", "--sweep", "tp=1,2", "micro-batch=1,2",
                                                    "--output", out])
        ranked = json.load(open(out))["ranked"]
        times = [r["breakdown"]["step"]["time_s"] for r in ranked]
        if len(ranked) != 4 or times != sorted(times) or {r["layout"]["global_batch"] for r in ranked} != {2}:
            sys.exit(f"FAIL: a sweep at --global-batch 2 is not ranked by step time: {times}")
        print(f"ok: sweep ranked {len(ranked)} layouts")
        # 4. Pipeline stages: the stage-to-stage messages from bench_p2p's fit (calibration.json
        # keeps spans_nodes as 0/1: reading it as a boolean once made every pp >= 2 fail).
        run(shlex.split(a.mpirun) + [os.path.join(a.bin_dir, "bench_p2p", "bench_p2p"), "--pattern", "sendrecv",
             "--sizes", "4K:1M:x4"] + FAST + ["--out", os.path.join(res, "p2p.csv")])
        out = os.path.join(a.work, "pp2.json")
        run([a.gpucal, "predict", res] + MODEL[:-1] + ["2", "--pp", "2", "--output", out])
        doc = json.load(open(out))
        sends = [op for op in doc["ops"] if op["bench"] == "p2p"]
        if not sends or any(not op["time_us_per_call"] > 0 or not any("p2p" in s for s in op["sources"])
                            for op in sends):
            sys.exit(f"FAIL: pp=2 stage messages not costed from the p2p fit: {sends}")
        print(f"ok: pp=2 with {len(sends)} stage-message ops from the p2p fit")
        # 5. The p2p tiers: at --ranks-per-node 1 the stage pair spans two nodes. With nothing
        # measured across nodes the intra-node fit is used, extrapolated, and says so; with rows
        # across nodes (the measured rows again, src_node != dst_node, 3x slower: the decision
        # on recorded values) their own fit prices it.
        intra = {op["op_role"]: op for op in sends}
        out = os.path.join(a.work, "pp2_rpn1.json")
        run([a.gpucal, "predict", res] + MODEL[:-1] + ["2", "--pp", "2", "--ranks-per-node", "1", "--output", out])
        spanning = [op for op in json.load(open(out))["ops"] if op["bench"] == "p2p"]
        if not spanning or any(op["provenance"] != "extrapolated" or "no p2p was measured across nodes" not in op["method"]
                               for op in spanning):
            sys.exit(f"FAIL: a pair across nodes priced by the intra-node fit is not marked: {spanning}")
        p2p_csv = os.path.join(res, "p2p.csv")
        with open(p2p_csv, newline="") as f:
            rows = list(csv.DictReader(f))
        fields = list(rows[0].keys())
        across = []
        for r in rows:
            c = dict(r, dst_node=str(int(r["dst_node"] or 0) + 1), point=r["point"] + "/across")
            for col in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_min", "time_us_max", "time_us_mean"):
                if c.get(col):
                    c[col] = str(3 * float(c[col]))
            across.append(c)
        with open(p2p_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows + across)
        for f in os.listdir(res):  # the calibration is made again from the CSVs
            if f.startswith("calibration"):
                os.remove(os.path.join(res, f))
        run([a.gpucal, "predict", res] + MODEL[:-1] + ["2", "--pp", "2", "--ranks-per-node", "1", "--output", out])
        spanning = [op for op in json.load(open(out))["ops"] if op["bench"] == "p2p"]
        if not spanning or any("across nodes" not in op["method"] or op["provenance"] == "extrapolated" and
                               "no p2p was measured" in op["method"] or
                               not 2.5 < op["time_us_per_call"] / intra[op["op_role"]]["time_us_per_call"] < 3.5
                               for op in spanning):
            sys.exit(f"FAIL: a pair across nodes is not priced by the p2p fit across nodes: {spanning}")
        print(f"ok: the stage pair across nodes priced by the inter-node p2p fit "
              f"({spanning[0]['time_us_per_call'] / intra[spanning[0]['op_role']]['time_us_per_call']:.2f}x the intra-node)")
    else:
        # No collectives measured, no communication model: the TP messages cannot be costed.
        p = run([a.gpucal, "predict", res] + MODEL + ["--tp", "2", "--output", os.path.join(a.work, "x.json")], 1)
        if len(p.stderr.strip().splitlines()) != 1 or "cannot cost" not in p.stderr:
            sys.exit(f"FAIL: expected one 'cannot cost' line, got {p.stderr!r}")
        print("ok: tp=2 without communication data refused")


if __name__ == "__main__":
    main()
