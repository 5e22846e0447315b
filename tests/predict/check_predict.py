#!/usr/bin/env python3
"""gpucal predict end to end on the host: measures a shrunk Llama-3 8B layer with --model
(bench_gemm, bench_attention, bench_memory; with --mpirun a two-rank collectives sweep for the
communication model), then checks predict.json against the CSVs by its own arithmetic:
  - at the measured layout every op is `measured` and its time per call is the time_us_median
    of the CSV row its sources name; the step (pp = 1, overlap none) is the sum over ops of
    time x calls_per_step, and tokens/s = global_batch x seq / step;
  - at TP = 2 (shapes not measured) GEMMs come from the calibration tables (interpolated or
    extrapolated, never measured) and the TP messages from the communication model;
  - --sweep ranks layouts by step time; a layout nothing can cost is an error (exit 1, one line).
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
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
    if p.returncode != expect_rc:
        sys.exit(f"FAIL: {shlex.join(cmd)} exited {p.returncode} (expected {expect_rc})\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
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
    run([a.gpucal, "predict", res] + MODEL + ["--out", out])
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
    p = run([a.gpucal, "predict", res] + MODEL + ["--measure-step", "--out", out], 1)
    if "--measure-step: no ok row" not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
        sys.exit(f"FAIL: --measure-step without step.csv: {p.stderr!r}")
    run([os.path.join(a.bin_dir, "bench_step", "bench_step")] + MODEL + FAST + ["--out", os.path.join(res, "step.csv")])
    run([a.gpucal, "predict", res] + MODEL + ["--measure-step", "--out", out])
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

    # 2. Another layout: GEMMs from the tables; messages need a communication model.
    if a.mpirun:
        run(shlex.split(a.mpirun) + [os.path.join(a.bin_dir, "bench_collectives", "bench_collectives"),
             "--collective", "allreduce,allgather,reduce_scatter", "--dtype", "fp32", "--sizes", "4K:1M:x4"] + FAST +
            ["--out", os.path.join(res, "collectives.csv")])
        out = os.path.join(a.work, "tp2.json")
        run([a.gpucal, "predict", res] + MODEL + ["--tp", "2", "--sp", "--out", out])
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
        run([a.gpucal, "predict", res] + MODEL + ["--tp", "2", "--sp", "--overlap", "tp", "--out", out])
        hidden = json.load(open(out))["breakdown"]
        tp_pipeline = sum(op["time_s_per_step"] for op in doc["ops"]
                          if op.get("dimension") == "tp" and not op["per_step"])
        if not close(hidden["step"]["time_s"], total - min(tp_pipeline, hidden["compute"]["gemm"]["time_s"])):
            sys.exit("FAIL: --overlap tp did not hide min(tp, gemm)")
        # 3. The sweep ranks layouts, fastest first.
        out = os.path.join(a.work, "sweep.json")
        run([a.gpucal, "predict", res] + MODEL + ["--sweep", "tp=1,2", "micro-batch=1,2", "--out", out])
        ranked = json.load(open(out))["ranked"]
        times = [r["breakdown"]["step"]["time_s"] for r in ranked]
        if len(ranked) != 4 or times != sorted(times):
            sys.exit(f"FAIL: sweep not ranked: {times}")
        print(f"ok: sweep ranked {len(ranked)} layouts")
        # 4. Pipeline stages: the stage-to-stage messages from bench_p2p's fit (calibration.json
        # keeps spans_nodes as 0/1: reading it as a boolean once made every pp >= 2 fail).
        run(shlex.split(a.mpirun) + [os.path.join(a.bin_dir, "bench_p2p", "bench_p2p"), "--pattern", "sendrecv",
             "--sizes", "4K:1M:x4"] + FAST + ["--out", os.path.join(res, "p2p.csv")])
        out = os.path.join(a.work, "pp2.json")
        run([a.gpucal, "predict", res] + MODEL[:-1] + ["2", "--pp", "2", "--out", out])
        doc = json.load(open(out))
        sends = [op for op in doc["ops"] if op["bench"] == "p2p"]
        if not sends or any(not op["time_us_per_call"] > 0 or not any("p2p" in s for s in op["sources"])
                            for op in sends):
            sys.exit(f"FAIL: pp=2 stage messages not costed from the p2p fit: {sends}")
        print(f"ok: pp=2 with {len(sends)} stage-message ops from the p2p fit")
    else:
        # No collectives measured, no communication model: the TP messages cannot be costed.
        p = run([a.gpucal, "predict", res] + MODEL + ["--tp", "2", "--out", os.path.join(a.work, "x.json")], 1)
        if len(p.stderr.strip().splitlines()) != 1 or "cannot cost" not in p.stderr:
            sys.exit(f"FAIL: expected one 'cannot cost' line, got {p.stderr!r}")
        print("ok: tp=2 without communication data refused")


if __name__ == "__main__":
    main()
