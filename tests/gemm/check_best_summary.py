#!/usr/bin/env python3
"""Runs bench_gemm and checks FILE.best.csv against FILE.csv: one line per dtype->out key
with the largest tflops of the ok rows, and efficiency_vs_best_so_far in each row equal to
its tflops over the running maximum of its key (rows are never rewritten).

usage: check_best_summary.py [--gpu cuda|hip] FILE.csv -- COMMAND...
"""
import csv
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from run_and_check import run_bench  # noqa: E402  (one way to run a bench and check its exit and stderr)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    gpu = None
    if args[0] == "--gpu":
        gpu, args = args[1], args[2:]
    path, cmd = args[0], args[2:]
    best_path = path[:-4] + ".best.csv"
    for p in (path, best_path):
        if os.path.exists(p):
            os.remove(p)
    run_bench(cmd, gpu=gpu)  # exits 77 where the GPU is missing, fails unless the exit code is 0
    rows = list(csv.DictReader(open(path, newline="")))
    running, expected_rows = {}, {}
    for r in rows:
        if r["status"] != "ok":
            if r["efficiency_vs_best_so_far"] != "":
                fail(f"{r['point']}: efficiency_vs_best_so_far on a {r['status']} row")
            continue
        key = f"{r['dtype']}->{r['out_dtype']}"
        t = float(r["tflops"])
        running[key] = max(running.get(key, 0.0), t)
        expected_rows[key] = expected_rows.get(key, 0) + 1
        eff = float(r["efficiency_vs_best_so_far"])
        if not math.isclose(eff, t / running[key], rel_tol=1e-5):
            fail(f"{r['point']}: efficiency_vs_best_so_far {eff}, expected {t / running[key]}")
    best = list(csv.DictReader(open(best_path, newline="")))
    if {b["key"] for b in best} != set(running):
        fail(f"best keys {[b['key'] for b in best]}, expected {sorted(running)}")
    for b in best:
        if not math.isclose(float(b["best_tflops"]), running[b["key"]], rel_tol=1e-5):
            fail(f"{b['key']}: best {b['best_tflops']}, expected {running[b['key']]}")
        if int(b["rows"]) != expected_rows[b["key"]]:
            fail(f"{b['key']}: rows {b['rows']}, expected {expected_rows[b['key']]}")
        top = [r for r in rows if r["point"] == b["best_point"]]
        if not top or not math.isclose(float(top[0]["tflops"]), float(b["best_tflops"]), rel_tol=1e-5):
            fail(f"{b['key']}: best_point {b['best_point']} does not carry the best tflops")
    print(f"OK: {len(rows)} rows, {len(best)} best entries")


if __name__ == "__main__":
    main()
