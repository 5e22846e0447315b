#!/usr/bin/env python3
"""Tables for compare_stream.sh: per kernel (copy, triad), the launch figures of STREAM
(stream_<variant>_<round>_<launch>.txt: its average and minimum time, in us) and of
bench_memory (bench_<round>_<launch>.csv: time_us_median and time_us_min), pooled over rounds,
as distributions (tests/perf/launch_stats.py) and ratios bench_memory / STREAM (times: > 1 is
slower): of the medians over launches and state-matched; and how many bench_memory rows a loaded
machine spoiled (their `suspect` column).
usage: compare_stream_table.py WORK"""
import csv
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch_stats  # noqa: E402


def stream_times(path):
    """{kernel: (avg_us, min_us)} from one STREAM launch's table (times in seconds)."""
    text = open(path).read()
    out = {}
    for k in ("Copy", "Triad"):
        m = re.search(r"^%s:\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)" % k, text, re.M)
        if m:
            out[k.lower()] = (float(m.group(2)) * 1e6, float(m.group(3)) * 1e6)
    return out


def collect(work):
    """{kernel: {figure: [launch values]}} for figures stream_avg, stream_min, v4_min, our_median, our_min."""
    data = {"copy": {}, "triad": {}}
    suspect = {"copy": [], "triad": []}
    for path in glob.glob(os.path.join(work, "stream_*_*_*.txt")):
        variant = os.path.basename(path).split("_")[1]
        for k, (avg, mn) in stream_times(path).items():
            if variant == "base":
                data[k].setdefault("stream_avg", []).append(avg)
                data[k].setdefault("stream_min", []).append(mn)
            else:
                data[k].setdefault("v4_min", []).append(mn)
    for path in glob.glob(os.path.join(work, "bench_*_*.csv")):
        if path.endswith(".samples.csv"):  # bench_memory's per-sample file beside each CSV
            continue
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row["status"] == "ok" and row["kernel"] in data:
                    data[row["kernel"]].setdefault("our_median", []).append(float(row["time_us_median"]))
                    data[row["kernel"]].setdefault("our_min", []).append(float(row["time_us_min"]))
                    suspect[row["kernel"]].append(row.get("suspect", ""))
    return data, suspect


def main():
    data, suspect = collect(sys.argv[1])
    pairs = (("our_median", "stream_avg", "our median vs STREAM's average"),
             ("our_min", "stream_min", "best vs best (baseline ISA)"), ("our_min", "v4_min", "best vs best (x86-64-v4)"))
    complete = False
    for kernel, figures in data.items():
        print(f"\n{kernel}:")
        for name, values in sorted(figures.items()):
            print(f"  {name:<11} {launch_stats.describe(launch_stats.summary(values))}")
        flagged = [s for s in suspect[kernel] if s]
        if flagged:
            print(f"  bench_memory rows flagged suspect (preempted): {len(flagged)} of {len(suspect[kernel])}; "
                  f"first: {flagged[0]}")
        for ours, theirs, what in pairs:
            if ours in figures and theirs in figures:
                complete = True
                c = launch_stats.compare(figures[ours], figures[theirs])
                print(f"  {what}: ratio of medians {c['median_ratio']:.3f}, state-matched {c['state_ratio']:.3f}")
    if not complete:
        print("no launch of both tools to compare")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
