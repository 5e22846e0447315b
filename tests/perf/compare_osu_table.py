#!/usr/bin/env python3
"""Ratio tables for compare_osu.sh: reads the work folder it filled and prints, per
benchmark and size, gpucal's mean time over OSU's average latency (the median over rounds),
the GEMM ratio against direct OpenBLAS per shape, and the harness overhead; then each
target's verdict. usage: compare_osu_table.py WORK ROUNDS COMBINE"""
import csv
import glob
import os
import statistics
import sys

work, rounds, combine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
failed = []


def read_osu(path):
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


def comm_table(bench):
    ratios, gp_means, osu_means = {}, {}, {}
    for r in range(1, rounds + 1):
        osu_path = os.path.join(work, f"osu_{bench}_{r}.txt")
        gp_paths = [p for p in glob.glob(os.path.join(work, f"gpucal_{bench}_{r}_*.csv"))
                    if not p.endswith(".samples.csv")]
        if not (os.path.exists(osu_path) and gp_paths):
            continue
        osu = read_osu(osu_path)
        for row in (row for path in gp_paths for row in read_rows(path)):
            s = int(row["size_bytes"])
            mean = float(row["time_us_mean"])
            if bench == "latency":
                mean /= 2  # one way, as osu_latency reports
                osu_size = s
            elif bench == "allgather":
                osu_size = s // 2  # OSU's allgather size is per rank (2 ranks)
            else:
                osu_size = s
            if osu_size not in osu or osu[osu_size] <= 0:
                continue
            ratios.setdefault(s, []).append(mean / osu[osu_size])
            gp_means.setdefault(s, []).append(mean)
            osu_means.setdefault(s, []).append(osu[osu_size])
    if not ratios:
        print(f"\n{bench}: no data")
        failed.append(f"{bench}: no data")
        return
    print(f"\n{bench} (2 ranks, gpucal --combine {combine}; ratio = gpucal mean / OSU avg, median of {rounds} rounds)")
    print(f"{'size_B':>9} {'gpucal_us':>10} {'osu_us':>10} {'ratio':>7}  per-round ratios")
    per_size = []
    for s in sorted(ratios):
        med = statistics.median(ratios[s])
        per_size.append(med)
        rr = " ".join(f"{x:.2f}" for x in ratios[s])
        print(f"{s:>9} {statistics.median(gp_means[s]):>10.2f} {statistics.median(osu_means[s]):>10.2f} {med:>7.3f}  {rr}")
    median_over_sizes = statistics.median(per_size)
    worst = max(per_size)
    ok = abs(median_over_sizes - 1) <= 0.05 and worst <= 1.25
    print(f"{bench}: median over sizes {median_over_sizes:.3f}, max {worst:.3f}, min {min(per_size):.3f} "
          f"-> {'meets' if ok else 'MISSES'} the targets (|median - 1| <= 0.05, max <= 1.25)")
    if not ok:
        failed.append(bench)


def gemm_table():
    direct, direct_median, gp, gp_median, overhead = {}, {}, {}, {}, {}
    for r in range(1, rounds + 1):
        path = os.path.join(work, f"direct_{r}.txt")
        if not os.path.exists(path):
            continue
        for line in open(path):
            s, us, us_median = line.split()
            direct.setdefault(int(s), []).append(float(us))
            direct_median.setdefault(int(s), []).append(float(us_median))
        for s in list(direct):
            p = os.path.join(work, f"gemm_{s}_{r}.csv")
            if not os.path.exists(p):
                continue
            for row in read_rows(p):
                gp.setdefault(s, []).append(float(row["time_us_mean"]))
                gp_median.setdefault(s, []).append(float(row["time_us_median"]))
                timed = int(row["samples"]) * int(row["launches_per_sample"]) * float(row["time_us_mean"]) * 1e-6
                overhead.setdefault(s, []).append(1 - timed / float(row["sampling_time_s"]))
    if not gp:
        return
    print(f"\nGEMM fp32 NN hot (ratio = bench_gemm time_us_mean / direct cblas_sgemm mean, median of {rounds} rounds;"
          " median_ratio = time_us_median / the direct loop's median block)")
    print(f"{'shape':>6} {'gpucal_us':>10} {'direct_us':>10} {'ratio':>7} {'median_ratio':>13} {'untimed_share':>14}")
    for s in sorted(gp):
        ratio = statistics.median(g / d for g, d in zip(gp[s], direct[s]))
        median_ratio = statistics.median(g / d for g, d in zip(gp_median[s], direct_median[s]))
        share = statistics.median(overhead[s])
        print(f"{s:>6} {statistics.median(gp[s]):>10.2f} {statistics.median(direct[s]):>10.2f} {ratio:>7.3f} "
              f"{median_ratio:>13.3f} {share:>14.4f}")
        if abs(ratio - 1) > 0.02:
            failed.append(f"gemm {s}^3 ratio {ratio:.3f}")
        if s == 64:
            print(f"harness overhead at 64^3: {100 * (ratio - 1):+.2f}% in the reported time, "
                  f"{100 * share:.2f}% of the sampling wall time untimed (target <= 1%)")
            if ratio - 1 > 0.01 or share > 0.01:
                failed.append("overhead at 64^3")


for bench in ("allreduce", "allgather", "reduce_scatter", "latency"):
    if any(f.startswith(f"gpucal_{bench}_") for f in os.listdir(work)):  # the run compared it
        comm_table(bench)
gemm_table()
print("\n" + ("all targets met" if not failed else "targets missed: " + ", ".join(failed)))
sys.exit(1 if failed else 0)
