#!/usr/bin/env python3
"""gpucal run --repeat-process end to end: the smoke suite's memory bench (the only one in a
--bin-dir holding just bench_memory) run as 3 processes; memory.csv holds every process's rows
(process_run 0..2, repetitions unique per point), memory.samples.csv joins on them,
memory.process_runs.csv gives each point's 3 process medians; gpucal compare judges the points
on the processes' medians: the folder against itself has no regression; against a copy whose
times are 100x, exactly the points whose processes' medians lie within 100x of each other (their
spread between processes below 99) are regressions, the others unchanged.

usage: check_process_runs.py GPUCAL BENCH_MEMORY WORKDIR
"""
import csv
import os
import shutil
import subprocess
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def verdicts_by_point(report):
    """{point: verdict} from gpucal compare's table (lines: verdict, point, ...)."""
    out = {}
    for line in report.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[1].startswith("memory/"):
            out[parts[1]] = parts[0]
    return out


def scale_times(folder, factor):
    for name in ("memory.csv", "memory.samples.csv"):
        path = os.path.join(folder, name)
        rows = list(csv.reader(open(path, newline="")))
        cols = [i for i, c in enumerate(rows[0]) if c.startswith("time_us")]
        for r in rows[1:]:
            for i in cols:
                r[i] = repr(float(r[i]) * factor)
        with open(path, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)


def main():
    gpucal, bench, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir)
    os.symlink(os.path.abspath(bench), os.path.join(bin_dir, "bench_memory"))
    base = os.path.join(work, "base")
    run = subprocess.run([gpucal, "run", "--suite", "smoke", "--backend", "host", "--bin-dir", bin_dir, "--out", base,
                          "--repeat-process", "3", "--no-plots", "--allow-suspect"],
                         capture_output=True, text=True, timeout=900)
    print(run.stdout[-2500:], run.stderr[-1500:])
    # The other benches are not in --bin-dir: the run measures memory, then fails closed naming them.
    if run.returncode != 1 or "INCOMPLETE: gemm not built, attention not built" not in run.stdout:
        fail(f"gpucal run exited {run.returncode}, expected 1 with an INCOMPLETE verdict naming the benches not built")
    rows = [r for r in read(os.path.join(base, "memory.csv"))]
    if {r["process_run"] for r in rows} != {"0", "1", "2"}:
        fail("process_run cells are not 0, 1, 2: %s" % sorted({r["process_run"] for r in rows}))
    keys = [(r["point"], r["repetition"]) for r in rows]
    if len(keys) != len(set(keys)):
        fail("(point, repetition) repeats in the merged memory.csv")
    per_point = {}
    for r in rows:
        per_point.setdefault(r["point"], set()).add(r["process_run"])
    if any(len(v) != 3 for v in per_point.values()):
        fail("a point lacks a process's row")
    samples = read(os.path.join(base, "memory.samples.csv"))
    if {(s["point"], s["repetition"]) for s in samples} - set(keys):
        fail("memory.samples.csv has (point, repetition) pairs the CSV lacks")
    spread = read(os.path.join(base, "memory.process_runs.csv"))
    ok_points = {r["point"] for r in rows if r["status"] == "ok"}
    if {s["point"] for s in spread} != ok_points or any(s["processes"] != "3" for s in spread):
        fail("memory.process_runs.csv does not give every ok point its 3 processes")
    for s in spread:
        medians = [float(x) for x in s["process_medians_us"].split()]
        if not (min(medians) == float(s["time_us_process_min"]) and sorted(medians)[1] ==
                float(s["time_us_median_of_processes"])):
            fail(f"{s['point']}: the spread row disagrees with its medians: {s}")
    same = subprocess.run([gpucal, "compare", base, base], capture_output=True, text=True)
    if same.returncode != 0 or "process-medians" not in same.stdout or "REGRESSION" in same.stdout:
        fail(f"compare of the folder with itself: exit {same.returncode}: {same.stdout[-1500:]}")
    slow = os.path.join(work, "slow")
    shutil.copytree(base, slow)
    scale_times(slow, 100.0)
    cmp = subprocess.run([gpucal, "compare", base, slow], capture_output=True, text=True)
    verdicts = verdicts_by_point(cmp.stdout)
    # Every process 100x slower: disjoint when the baseline's processes lie within 100x of each
    # other, and a regression when 99 exceeds the spread between processes (and the threshold).
    # A point with a preempted row (kept by --allow-suspect on a busy machine) is named suspect,
    # never judged.
    suspect = {r["point"] for r in rows if r.get("suspect")}
    expected = {s["point"] for s in spread
                if 100 * float(s["time_us_process_min"]) > float(s["time_us_process_max"])
                and float(s["between_process_spread_rel"]) < 99} - suspect
    got = {p for p, v in verdicts.items() if v == "REGRESSION"}
    named_suspect = {p for p, v in verdicts.items() if v.lower() == "suspect"}
    if got != expected or not expected or cmp.returncode == 0:
        fail(f"compare against 100x times: exit {cmp.returncode}; regressions {sorted(got)}, expected {sorted(expected)}"
             f" (suspect in the baseline: {sorted(suspect)})")
    if not suspect <= named_suspect:
        fail(f"points with a suspect row not named suspect: {sorted(suspect - named_suspect)}")
    print(f"OK: {len(per_point)} points x 3 processes merged; {len(spread)} spread rows; compare: {len(got)} "
          f"regressions at 100x, {len(suspect)} suspect, {len(spread) - len(got) - len(suspect)} within their spread "
          f"between processes; none against itself")


if __name__ == "__main__":
    main()
