#!/usr/bin/env python3
"""Tables for compare_osu.sh: reads the work folder it filled (one file per launch:
osu_<bench>_<size>_<round>_<launch>.txt beside gpucal_<bench>_<size>_<round>_<launch>.csv,
direct_<shape>_<round>_<launch>.txt beside gemm_<shape>_<round>_<launch>.csv) and prints, per
benchmark and size, each tool's distribution of launch figures (median over launches, p10/p90,
both modes when bimodal: tests/perf/launch_stats.py), the ratio of the medians and the
state-matched ratio the verdict uses; then each target's verdict.
usage: compare_osu_table.py WORK COMBINE"""
import csv
import glob
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch_stats  # noqa: E402

failed = []


def read_osu(path):
    """{size: average latency} of one OSU launch."""
    out = {}
    for line in open(path):
        parts = line.split()
        if not parts or line.startswith("#"):
            continue
        try:
            out[int(parts[0])] = float(parts[1])
        except ValueError:
            continue
    return out


def read_rows(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["status"] == "ok"]


def launches(work, pattern):
    """{(key, round, launch): path} for files named <prefix>_<key>_<round>_<launch>.<ext>."""
    out = {}
    for path in glob.glob(os.path.join(work, pattern)):
        if path.endswith(".samples.csv"):
            continue
        m = re.search(r"_(\d+)_(\d+)_(\d+)\.(txt|csv)$", path)
        if m:
            out[(int(m.group(1)), int(m.group(2)), int(m.group(3)))] = path
    return out


def gpucal_figure(bench, path):
    """The launch's figure comparable with OSU's: time_us_mean (latency: half the round trip)."""
    rows = read_rows(path)
    if not rows:
        return None
    mean = float(rows[0]["time_us_mean"])
    return mean / 2 if bench == "latency" else mean


def osu_figure(bench, size, path):
    osu_size = size // 2 if bench == "allgather" else size  # OSU's allgather size is per rank
    value = read_osu(path).get(osu_size)
    return value if value and value > 0 else None


def print_pair(label, c):
    print(f"{label:>9} {c['ours']['median']:>10.2f} {c['theirs']['median']:>10.2f} {c['median_ratio']:>7.3f} "
          f"{c['state_ratio']:>7.3f}")
    for who, s in (("gpucal", c["ours"]), ("other", c["theirs"])):
        if len(s["modes"]) == 2:
            print(f"{'':>9}   {who}: {launch_stats.describe(s)}")


def comm_table(work, bench, combine):
    ours = {}
    theirs = {}
    for (size, r, l), path in launches(work, f"gpucal_{bench}_*.csv").items():
        v = gpucal_figure(bench, path)
        if v is not None:
            ours.setdefault(size, []).append(v)
    for (size, r, l), path in launches(work, f"osu_{bench}_*.txt").items():
        v = osu_figure(bench, size, path)
        if v is not None:
            theirs.setdefault(size, []).append(v)
    sizes = sorted(s for s in ours if s in theirs)
    if not sizes:
        print(f"\n{bench}: no data")
        failed.append(f"{bench}: no data")
        return
    print(f"\n{bench} (2 ranks, gpucal --combine {combine}; launch figures pooled over rounds; ratios gpucal / OSU: "
          "of the medians over launches, and state-matched: fast state over fast state)")
    print(f"{'size_B':>9} {'gpucal_us':>10} {'osu_us':>10} {'medians':>7} {'state':>7}")
    state = []
    for s in sizes:
        c = launch_stats.compare(ours[s], theirs[s])
        state.append(c["state_ratio"])
        print_pair(str(s), c)
    median_over_sizes = statistics.median(state)
    worst = max(state)
    ok = abs(median_over_sizes - 1) <= 0.05 and worst <= 1.25
    print(f"{bench}: state-matched ratio, median over sizes {median_over_sizes:.3f}, max {worst:.3f}, "
          f"min {min(state):.3f} -> {'meets' if ok else 'MISSES'} the targets (|median - 1| <= 0.05, max <= 1.25)")
    if not ok:
        failed.append(bench)


def gemm_table(work):
    ours, theirs, overhead = {}, {}, {}
    for (s, r, l), path in launches(work, "gemm_*.csv").items():
        for row in read_rows(path):
            ours.setdefault(s, []).append(float(row["time_us_mean"]))
            timed = int(row["samples"]) * int(row["launches_per_sample"]) * float(row["time_us_mean"]) * 1e-6
            overhead.setdefault(s, []).append(1 - timed / float(row["sampling_time_s"]))
    for (s, r, l), path in launches(work, "direct_*.txt").items():
        parts = open(path).read().split()
        if len(parts) >= 2:
            theirs.setdefault(s, []).append(float(parts[1]))
    shapes = sorted(s for s in ours if s in theirs)
    if not shapes:
        return
    print("\nGEMM fp32 NN hot (bench_gemm time_us_mean / direct cblas_sgemm mean per launch; ratios of the medians "
          "over launches and state-matched)")
    print(f"{'shape':>9} {'gpucal_us':>10} {'direct_us':>10} {'medians':>7} {'state':>7}")
    for s in shapes:
        c = launch_stats.compare(ours[s], theirs[s])
        print_pair(f"{s}^3", c)
        if abs(c["state_ratio"] - 1) > 0.02:
            failed.append(f"gemm {s}^3 state-matched ratio {c['state_ratio']:.3f}")
        if s == 64:
            share = statistics.median(overhead[s])
            print(f"harness overhead at 64^3: {100 * (c['state_ratio'] - 1):+.2f}% in the reported time, "
                  f"{100 * share:.2f}% of the sampling wall time untimed (target <= 1%)")
            if c["state_ratio"] - 1 > 0.01 or share > 0.01:
                failed.append("overhead at 64^3")


def main():
    work, combine = sys.argv[1], sys.argv[2]
    for bench in ("allreduce", "allgather", "reduce_scatter", "latency"):
        if glob.glob(os.path.join(work, f"gpucal_{bench}_*")):  # the run compared it
            comm_table(work, bench, combine)
    gemm_table(work)
    print("\n" + ("all targets met" if not failed else "targets missed: " + ", ".join(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
