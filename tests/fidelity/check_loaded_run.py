#!/usr/bin/env python3
"""A deliberately loaded run is flagged: bench_memory's host kernels measured while CPU hogs
(two per CPU this process may use, each ending by itself after --hog-seconds) compete for every
core. The large points (each launch milliseconds of work on every team thread) share their CPUs
with the hogs and must carry a `suspect` reason; a 64 KiB point may stay clean and right (its
threads sleep between launches and are woken ahead of a hog, and a 100 us block rarely spans a
switch), which the detector must not hide either way. `gpucal fit` must leave the flagged rows
out and say so, and use them with --allow-suspect. (The quiet case is tests/fidelity/test_preemption.cpp: on a shared
machine no run is reliably quiet, synthetic samples are.)

usage: check_loaded_run.py BENCH_MEMORY GPUCAL WORKDIR [--hog-seconds S]
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

HOG = "import time\nend = time.monotonic() + {s}\nwhile time.monotonic() < end:\n    pass\n"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def start_hogs(seconds):
    n = 2 * len(os.sched_getaffinity(0))
    return [subprocess.Popen([sys.executable, "-c", HOG.format(s=seconds)]) for _ in range(n)]


def stop_hogs(hogs):
    for h in hogs:  # each ends by itself; this only shortens their life
        if h.poll() is None:
            h.kill()
        h.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("gpucal")
    ap.add_argument("work")
    ap.add_argument("--hog-seconds", type=float, default=90)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    folder = os.path.join(a.work, "loaded")
    os.makedirs(folder)
    csv_path = os.path.join(folder, "memory.csv")
    hogs = start_hogs(a.hog_seconds)
    try:
        run = subprocess.run([a.bench, "--backend", "host", "--kernel", "copy,triad", "--dtype", "fp32",
                              "--bytes", "64K,16M,64M", "--max-time-per-point", "0.4", "--warmup-time", "0.02",
                              "--quiet", "--out", csv_path], capture_output=True, text=True, timeout=300)
    finally:
        stop_hogs(hogs)
    if run.returncode != 0:
        fail(f"bench_memory exited {run.returncode}: {run.stderr[-2000:]}")
    rows = [r for r in csv.DictReader(open(csv_path, newline="")) if r["status"] == "ok"]
    flagged = [r for r in rows if r["suspect"]]
    for r in rows:
        print(f"{r['point']}: median {r['time_us_median']} us, min {r['time_us_min']} us, threads {r['threads']} "
              f"on cpus {r['thread_cpus']}; suspect: {r['suspect'] or '-'}")
    if not rows:
        fail("no ok rows")
    if not flagged:
        fail(f"none of {len(rows)} rows measured beside {2 * len(os.sched_getaffinity(0))} CPU hogs is flagged")
    fit = subprocess.run([a.gpucal, "fit", folder], capture_output=True, text=True)
    left_out = f"{len(flagged)} ok row(s) with suspect timings left out of the fits"
    if fit.returncode != 0 or left_out not in fit.stdout + fit.stderr:
        fail(f"gpucal fit did not leave the suspect rows out (exit {fit.returncode}): {fit.stdout[-1500:]} {fit.stderr[-1500:]}")
    left = json.load(open(os.path.join(folder, "calibration.json")))["sources"]["memory"]["suspect_left_out"]
    if left != len(flagged):
        fail(f"calibration.json sources.memory.suspect_left_out is {left}, expected {len(flagged)}")
    allowed = subprocess.run([a.gpucal, "fit", folder, "--allow-suspect"], capture_output=True, text=True)
    if allowed.returncode != 0 or "used in the fits (--allow-suspect)" not in allowed.stdout + allowed.stderr:
        fail(f"gpucal fit --allow-suspect: exit {allowed.returncode}: {allowed.stdout[-1500:]}")
    left = json.load(open(os.path.join(folder, "calibration.json")))["sources"]["memory"]["suspect_left_out"]
    if left != 0:
        fail(f"with --allow-suspect, sources.memory.suspect_left_out is {left}, expected 0")
    print(f"OK: {len(flagged)} of {len(rows)} rows flagged suspect under load; fit leaves them out, "
          "--allow-suspect uses them")


if __name__ == "__main__":
    main()
