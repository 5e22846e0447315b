#!/usr/bin/env python3
"""The ratio table of .ci/gpu-check: gpucal rows against PyTorch baselines of the same
measurement, for any bench. A results folder holds gpucal CSVs (any *.csv with gpucal's
columns) and baselines torch_<bench>.csv (tests/gpu/torch_common.py: bench, point,
torch_op, time_us_*); rows are joined on (bench, point).

  ratios.py DIR [--md FILE] [--csv FILE] [--print-rows N]

ours_vs_torch = torch time_us_median / gpucal time_us_median: above 1, gpucal's path is
faster than PyTorch's on that measurement (for GEMM and attention, the ratio of TFLOP/s).
`spread` says whether the two [p10, p90] intervals overlap (a difference inside it is noise).
Writes DIR/ratios.md and DIR/ratios.csv and prints the table (per bench: count, geometric
mean, min, max per torch op, then the N lowest and highest points).
"""
import argparse
import csv
import glob
import math
import os
import sys

RATIO_COLUMNS = ["bench", "point", "torch_op", "ours_time_us_median", "torch_time_us_median", "ours_vs_torch",
                 "ours_p10", "ours_p90", "torch_p10", "torch_p90", "spread"]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def is_gpucal_csv(path):
    name = os.path.basename(path)
    if name.startswith("torch_") or name.endswith((".samples.csv", ".best.csv")) or name.startswith("ratios"):
        return False
    with open(path, newline="") as f:
        header = next(csv.reader(f), [])
    return {"schema_version", "bench", "point", "status", "time_us_median"} <= set(header)


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def join(results_dir):
    """(ratio rows, notes): every ok torch row whose (bench, point) has an ok gpucal row."""
    ours, notes = {}, []
    for path in sorted(glob.glob(os.path.join(results_dir, "*.csv"))):
        if not is_gpucal_csv(path):
            continue
        for r in read_csv(path):
            if r.get("status") == "ok" and number(r.get("time_us_median")):
                ours[(r["bench"], r["point"])] = r
    rows, unmatched, skipped = [], [], 0
    for path in sorted(glob.glob(os.path.join(results_dir, "torch_*.csv"))):
        for t in read_csv(path):
            if t.get("status", "ok") != "ok" or not number(t.get("time_us_median")):
                skipped += 1
                continue
            o = ours.get((t.get("bench", ""), t.get("point", "")))
            if o is None:
                unmatched.append(f"{t.get('bench')} {t.get('point')}")
                continue
            ot, tt = number(o["time_us_median"]), number(t["time_us_median"])
            op10, op90 = number(o.get("time_us_p10")), number(o.get("time_us_p90"))
            tp10, tp90 = number(t.get("time_us_p10")), number(t.get("time_us_p90"))
            overlap = None not in (op10, op90, tp10, tp90) and op10 <= tp90 and tp10 <= op90
            rows.append({"bench": t["bench"], "point": t["point"], "torch_op": t.get("torch_op", ""),
                         "ours_time_us_median": ot, "torch_time_us_median": tt, "ours_vs_torch": tt / ot,
                         "ours_p10": op10, "ours_p90": op90, "torch_p10": tp10, "torch_p90": tp90,
                         "spread": "overlap" if overlap else "apart"})
    if unmatched:
        notes.append(f"{len(unmatched)} torch rows have no ok gpucal row with the same (bench, point), e.g. "
                     + "; ".join(unmatched[:3]))
    if skipped:
        notes.append(f"{skipped} torch rows were skipped or unmeasured (their status/detail columns say why)")
    rows.sort(key=lambda r: (r["bench"], r["torch_op"], r["point"]))
    return rows, notes


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def summary(rows):
    """(bench, torch_op) -> (count, geomean, min, max) of ours_vs_torch."""
    groups = {}
    for r in rows:
        groups.setdefault((r["bench"], r["torch_op"]), []).append(r["ours_vs_torch"])
    return {k: (len(v), geomean(v), min(v), max(v)) for k, v in sorted(groups.items())}


def markdown(rows, notes, print_rows=None):
    out = ["# gpucal against PyTorch", "",
           "ours_vs_torch = PyTorch median time / gpucal median time (> 1: gpucal faster). "
           "spread: whether the [p10, p90] intervals overlap.", "",
           "| bench | torch op | points | geomean | min | max |", "| --- | --- | --- | --- | --- | --- |"]
    for (bench, op), (n, g, lo, hi) in summary(rows).items():
        out.append(f"| {bench} | {op} | {n} | {g:.3f} | {lo:.3f} | {hi:.3f} |")
    out += [""] + [f"- {n}" for n in notes] + ([""] if notes else [])
    for bench in sorted({r["bench"] for r in rows}):
        chosen = [r for r in rows if r["bench"] == bench]
        title = f"## {bench}"
        if print_rows is not None and len(chosen) > 2 * print_rows:
            ranked = sorted(chosen, key=lambda r: r["ours_vs_torch"])
            chosen = ranked[:print_rows] + ranked[-print_rows:]
            title += f" (the {print_rows} lowest and highest of {len(ranked)}; all in ratios.md)"
        out += [title, "", "| point | torch op | ours us | torch us | ours/torch | spread |",
                "| --- | --- | --- | --- | --- | --- |"]
        for r in chosen:
            out.append(f"| {r['point']} | {r['torch_op']} | {r['ours_time_us_median']:.4g} | "
                       f"{r['torch_time_us_median']:.4g} | {r['ours_vs_torch']:.3f} | {r['spread']} |")
        out.append("")
    if not rows:
        out.append("No ratios: no torch row matched a gpucal row.")
    return "\n".join(out) + "\n"


def write(results_dir, md_path=None, csv_path=None, print_rows=10, stream=sys.stdout):
    rows, notes = join(results_dir)
    md_path = md_path or os.path.join(results_dir, "ratios.md")
    csv_path = csv_path or os.path.join(results_dir, "ratios.csv")
    with open(md_path, "w") as f:
        f.write(markdown(rows, notes))
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RATIO_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r[k] is None else r[k]) for k in RATIO_COLUMNS})
    if stream:
        stream.write(markdown(rows, notes, print_rows))
    return rows, notes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results_dir")
    ap.add_argument("--md")
    ap.add_argument("--csv")
    ap.add_argument("--print-rows", type=int, default=10)
    a = ap.parse_args(argv)
    if not os.path.isdir(a.results_dir):
        print(f"ratios.py: {a.results_dir}: not a folder", file=sys.stderr)
        return 2
    write(a.results_dir, a.md, a.csv, a.print_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
