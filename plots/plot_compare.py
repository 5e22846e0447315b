#!/usr/bin/env python3
"""Ratio of current to baseline median time per point (> 1: slower).

    plot_compare.py BASELINE_DIR CURRENT_DIR [-o OUT_DIR] [--threshold 0.05]
    plot_compare.py --compare-json compare.json [-o OUT_DIR]     (from `gpucal compare --json`)

Writes compare_ratios.png/.svg. From two folders, points are matched by (bench, point) on
time_us_median and coloured by the threshold alone; from gpucal's JSON, by gpucal's verdict
(which also requires statistical significance).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpucal_plot_common import num, plt, read_rows, save, skip  # noqa: E402

BENCHES = ("gemm", "attention", "collectives", "p2p")


def ratios_from_dirs(baseline, current, threshold):
    points = []
    for bench in BENCHES:
        base = {r["point"]: r for r in (read_rows(baseline, bench) or [])}
        cur = {r["point"]: r for r in (read_rows(current, bench) or [])}
        for point in sorted(set(base) & set(cur)):
            ratio = num(cur[point], "time_us_median") / num(base[point], "time_us_median")
            verdict = "REGRESSION" if ratio - 1 > threshold else "improvement" if 1 - ratio > threshold else "unchanged"
            points.append((bench + "/" + point, ratio, verdict))
    return points


def ratios_from_json(path):
    with open(path) as f:
        doc = json.load(f)
    return [(p["bench"] + "/" + p["point"], p["ratio"], p["verdict"]) for p in doc["points"]
            if p.get("ratio") is not None], doc.get("threshold", 0.05)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="*", help="BASELINE_DIR CURRENT_DIR")
    parser.add_argument("--compare-json")
    parser.add_argument("--threshold", type=float, default=0.05)
    parser.add_argument("-o", "--out", default=".")
    args = parser.parse_args()
    if args.compare_json:
        points, threshold = ratios_from_json(args.compare_json)
    elif len(args.dirs) == 2:
        for d in args.dirs:
            if not os.path.isdir(d):
                sys.exit("plot_compare.py: error: %s: not a directory" % d)
        points, threshold = ratios_from_dirs(args.dirs[0], args.dirs[1], args.threshold), args.threshold
    else:
        parser.error("give BASELINE_DIR CURRENT_DIR or --compare-json FILE")
    if not points:
        return skip("compare_ratios", "no point present in both runs")
    colors = {"REGRESSION": "tab:red", "improvement": "tab:green"}
    labels = [p[0] for p in points]
    fig, ax = plt.subplots(figsize=(9, max(3, 0.18 * len(points) + 1.5)))
    ax.barh(range(len(points)), [p[1] - 1 for p in points], left=1,
            color=[colors.get(p[2], "tab:gray") for p in points])
    ax.axvline(1, color="k", linewidth=0.8)
    for edge in (1 + threshold, 1 - threshold):
        ax.axvline(edge, color="k", linestyle=":", linewidth=0.8)
    if len(points) <= 80:
        ax.set_yticks(range(len(points)), labels, fontsize=6)
    else:
        ax.set_ylabel("point index (%d points; see the Markdown report for names)" % len(points))
    ax.invert_yaxis()
    ax.set_xlabel("current / baseline time_us_median (> 1: slower)")
    ax.set_title("gpucal compare: time ratio per point (threshold %.0f%%; red regression, green improvement)"
                 % (100 * threshold), fontsize=9)
    save(fig, args.out, "compare_ratios")


if __name__ == "__main__":
    main()
