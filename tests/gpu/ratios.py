#!/usr/bin/env python3
"""The ratio table of .ci/gpu-check: gpucal rows against PyTorch baselines of the same
measurement, for any bench. A results folder holds gpucal CSVs (any *.csv with gpucal's
columns) and baselines torch_<bench>.csv (tests/gpu/torch_common.py: bench, point,
torch_op, time_us_*); rows are joined on (bench, point), within the folder and within each
of its subfolders (part 3 writes its model step into step/).

A folder with a predict.json that compared bench_step's row (`gpucal predict --measure-step`,
its `measured_step`) adds a step prediction: predicted / measured, and predicted / PyTorch
against the torch_step row of the same (bench, point), the way baselines join.

  ratios.py DIR [--md FILE] [--csv FILE] [--print-rows N]

ours_vs_torch = torch time_us_median / gpucal time_us_median: above 1, gpucal's path is
faster than PyTorch's on that measurement (for GEMM and attention, the ratio of TFLOP/s).
`spread` says whether the two [p10, p90] intervals overlap (a difference inside it is noise).
Writes DIR/ratios.md, DIR/ratios.csv and DIR/targets.json and prints the tables: the reference
targets (ratio_targets.py, harness_targets.py: each target's measured value, points and
verdict), per (bench, torch op, dtype, variant) the count, geometric mean, min and max, then
per bench the N lowest and highest points.
"""
import argparse
import csv
import json
import math
import os
import re
import sys

import harness_targets
import ratio_targets
from results_folder import folders, gpucal_rows, is_ok, number, torch_rows

RATIO_COLUMNS = ["bench", "point", "torch_op", "ours_time_us_median", "torch_time_us_median", "ours_vs_torch",
                 "ours_p10", "ours_p90", "torch_p10", "torch_p90", "spread"]


def join(results_dir):
    """(ratio rows, notes) over the folder and its subfolders."""
    rows, notes = [], []
    for folder in folders(results_dir):
        r, n = join_folder(folder)
        rows += r
        notes += [n_ if folder == results_dir else f"{os.path.basename(folder)}/: {n_}" for n_ in n]
    rows.sort(key=lambda r: (r["bench"], r["torch_op"], r["point"]))
    return rows, notes


def ok_torch_rows(folder):
    """(ok rows with a time, count of the others) of the folder's torch_*.csv."""
    rows = torch_rows(folder)
    ok = [t for t in rows if is_ok(t)]
    return ok, len(rows) - len(ok)


def join_folder(results_dir):
    """(ratio rows, notes): every ok torch row whose (bench, point) has an ok gpucal row."""
    ours, notes = {(r["bench"], r["point"]): r for r in gpucal_rows(results_dir) if is_ok(r)}, []
    rows, unmatched = [], []
    torch_ok, skipped = ok_torch_rows(results_dir)
    for t in torch_ok:
        o = ours.get((t.get("bench", ""), t.get("point", "")))
        if o is None:
            unmatched.append(f"{t.get('bench')} {t.get('point')}")
            continue
        ot, tt = number(o["time_us_median"]), number(t["time_us_median"])
        op10, op90 = number(o.get("time_us_p10")), number(o.get("time_us_p90"))
        tp10, tp90 = number(t.get("time_us_p10")), number(t.get("time_us_p90"))
        rows.append({"bench": t["bench"], "point": t["point"], "torch_op": t.get("torch_op", ""),
                     "ours_time_us_median": ot, "torch_time_us_median": tt, "ours_vs_torch": tt / ot,
                     "ours_p10": op10, "ours_p90": op90, "torch_p10": tp10, "torch_p90": tp90,
                     "spread": spread(op10, op90, tp10, tp90)})
    if unmatched:
        notes.append(f"{len(unmatched)} torch rows have no ok gpucal row with the same (bench, point), e.g. "
                     + "; ".join(unmatched[:3]))
    if skipped:
        notes.append(f"{skipped} torch rows were skipped or unmeasured (their status/detail columns say why)")
    return rows, notes


def spread(a10, a90, b10, b90):
    """overlap when the two [p10, p90] intervals overlap (a difference within noise), else apart."""
    return "overlap" if None not in (a10, a90, b10, b90) and a10 <= b90 and b10 <= a90 else "apart"


# The targets for a step on a GPU: predicted within 5% of bench_step's kernel sequence,
# within 10% of the same step in PyTorch.
STEP_TARGETS = {"predicted_over_measured": 0.05, "predicted_over_torch": 0.10}


def step_predictions(results_dir):
    """One entry per predict.json (in the folder or a subfolder) with a `measured_step`:
    predicted, bench_step's median and p10/p90, the PyTorch step of the same (bench, point)
    when a torch_*.csv there has it ok, and the two ratios."""
    out = []
    for folder in folders(results_dir):
        path = os.path.join(folder, "predict.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            measured = json.load(f).get("measured_step")
        if not measured:
            continue
        predicted_us, measured_us = measured["predicted_s"] * 1e6, measured["time_s_median"] * 1e6
        entry = {"folder": os.path.relpath(folder, results_dir), "point": measured["point"],
                 "predicted_us": predicted_us, "measured_us": measured_us,
                 "measured_p10_us": measured["p10_s"] * 1e6, "measured_p90_us": measured["p90_s"] * 1e6,
                 "predicted_over_measured": predicted_us / measured_us, "roles_skipped": measured.get("roles_skipped", ""),
                 "torch_op": None, "torch_us": None, "torch_p10_us": None, "torch_p90_us": None,
                 "predicted_over_torch": None}
        bench = measured["point"].split("/", 1)[0]
        torch_rows, _ = ok_torch_rows(folder)
        t = next((t for t in torch_rows if (t.get("bench"), t.get("point")) == (bench, measured["point"])), None)
        if t:
            entry.update(torch_op=t.get("torch_op", ""), torch_us=number(t["time_us_median"]),
                         torch_p10_us=number(t.get("time_us_p10")), torch_p90_us=number(t.get("time_us_p90")),
                         predicted_over_torch=predicted_us / number(t["time_us_median"]))
        for key, tolerance in STEP_TARGETS.items():
            v = entry[key]
            entry[key.replace("predicted_over", "target")] = (
                "not measured" if v is None else f"{'met' if abs(v - 1) <= tolerance else 'missed'} (1 ± {tolerance:g})")
        out.append(entry)
    return out


def prediction_markdown(predictions):
    out = ["## step prediction (`gpucal predict --measure-step`)", "",
           "predicted: the sum of the step's operations measured one at a time (the folder's predict inputs); "
           "measured: bench_step running them as one sequence; PyTorch: tests/gpu/torch_step.py.", "",
           "| folder | point | predicted ms | bench_step ms (p10-p90) | PyTorch ms (p10-p90) | "
           "predicted / measured | predicted / PyTorch |", "| --- | --- | --- | --- | --- | --- | --- |"]

    def ms(v):
        return "-" if v is None else f"{v / 1e3:.4g}"

    for e in predictions:
        torch_text = "not measured" if e["torch_us"] is None else (
            f"{ms(e['torch_us'])} ({ms(e['torch_p10_us'])}-{ms(e['torch_p90_us'])})")
        ratio_torch = "-" if e["predicted_over_torch"] is None else f"{e['predicted_over_torch']:.3f}"
        out.append(f"| {e['folder']} | {e['point']} | {ms(e['predicted_us'])} | {ms(e['measured_us'])} "
                   f"({ms(e['measured_p10_us'])}-{ms(e['measured_p90_us'])}) | {torch_text} | "
                   f"{e['predicted_over_measured']:.3f} {e['target_measured']} | {ratio_torch} {e['target_torch']} |")
    return "\n".join(out) + "\n"


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


DTYPES = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8", "int32"}
SHAPE_SEGMENT = re.compile(r"^[a-z]{0,3}\d+[KMGT]?$")  # m4096, b1, sq4096, d128, 1G, r0, tp1, seq1024


def dtype_variant(bench, point):
    """(dtype, variant) of a point key: the key's dtype segment, and its segments less the bench,
    the dtype and the shape and size segments (m4096, d128, 1G...). A GEMM point without an
    autotune<N> segment is `heuristic`; a collective keeps its rank count n<N>.
    gemm/cublaslt/bf16/TN/m64/n64/k64/b1/autotune4/cold -> (bf16, cublaslt TN autotune4 cold)."""
    parts = point.split("/")[1:]
    dtype = next((p for p in parts if p in DTYPES), "-")
    words = [p for p in parts if p != dtype and (not SHAPE_SEGMENT.match(p) or bench == "collectives"
                                                  and re.fullmatch(r"n\d+", p))]
    if bench == "gemm" and words and not any(re.fullmatch(r"autotune\d+", w) for w in words):
        words.insert(len(words) - 1, "heuristic")
    return dtype, " ".join(words)


def summary(rows):
    """(bench, torch_op, dtype, variant) -> (count, geomean, min, max) of ours_vs_torch."""
    groups = {}
    for r in rows:
        groups.setdefault((r["bench"], r["torch_op"], *dtype_variant(r["bench"], r["point"])), []).append(
            r["ours_vs_torch"])
    return {k: (len(v), geomean(v), min(v), max(v)) for k, v in sorted(groups.items())}


def evaluate_targets(results_dir):
    """The reference targets (ratio_targets.TARGETS, in that order) measured in results_dir."""
    top = ratio_targets.Folder(results_dir)
    h = harness_targets
    return [ratio_targets.gemm_heuristic(top, "bf16"), ratio_targets.gemm_heuristic(top, "fp16"),
            ratio_targets.gemm_autotuned(top), ratio_targets.gemm_peak(top), ratio_targets.gemm_fp8(top),
            ratio_targets.attention_cudnn(top, "fwd"), ratio_targets.attention_cudnn(top, "bwd"),
            ratio_targets.attention_flash(top), *(ratio_targets.copies(top, d) for d in ("d2d", "h2d", "d2h")),
            ratio_targets.collectives_floor(top), ratio_targets.collectives_wrong(top),
            h.repeat_spread(results_dir), h.cold_slower(results_dir), h.telemetry(results_dir),
            h.sanitizer(results_dir), h.suites(results_dir)]


def targets_section(targets):
    out = ["## Targets", "",
           "Each reference target measured in this folder (targets.json has the same with every point). "
           "Verdicts: met, missed, incomplete (every measured point meets it, some of the set were not measured), "
           "not measured (why), recorded (no threshold).", "",
           "| target | threshold | measured | points | verdict |", "| --- | --- | --- | --- | --- |"]
    for t in targets:
        verdict = t["verdict"] + (f": {t['why']}" if t["why"] else "")
        cells = [t["target"], t["rule"], t["measured"], str(t["points"]), verdict]
        out.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(out) + "\n"


def targets_markdown(results_dir):
    """The targets section of results_dir's ratios.md, for a console."""
    return targets_section(evaluate_targets(results_dir))


def markdown(rows, notes, print_rows=None, predictions=(), targets=()):
    out = ["# gpucal against PyTorch", "",
           "ours_vs_torch = PyTorch median time / gpucal median time (> 1: gpucal faster). "
           "spread: whether the [p10, p90] intervals overlap.", ""]
    if targets:
        out += [targets_section(targets), "## Summary", ""]
    out += ["Per bench, PyTorch op, dtype and variant (the point key less its shape and size segments).", "",
            "| bench | torch op | dtype | variant | points | geomean | min | max |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (bench, op, dtype, variant), (n, g, lo, hi) in summary(rows).items():
        out.append(f"| {bench} | {op} | {dtype} | {variant} | {n} | {g:.3f} | {lo:.3f} | {hi:.3f} |")
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
    if predictions:
        out += ["", prediction_markdown(predictions)]
    return "\n".join(out) + "\n"


def write(results_dir, md_path=None, csv_path=None, print_rows=10, stream=sys.stdout):
    """Writes ratios.md, ratios.csv and targets.json into results_dir (or md_path, csv_path and
    targets.json beside csv_path); returns (ratio rows, notes)."""
    rows, notes = join(results_dir)
    predictions = step_predictions(results_dir)
    targets = evaluate_targets(results_dir)
    md_path = md_path or os.path.join(results_dir, "ratios.md")
    csv_path = csv_path or os.path.join(results_dir, "ratios.csv")
    with open(md_path, "w", encoding="utf-8") as f:
        f.write(markdown(rows, notes, predictions=predictions, targets=targets))
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RATIO_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r[k] is None else r[k]) for k in RATIO_COLUMNS})
    with open(os.path.join(os.path.dirname(os.path.abspath(csv_path)), "targets.json"), "w", encoding="utf-8") as f:
        json.dump({"verdicts": ["met", "missed", "incomplete", "not measured", "recorded"],
                   "targets": targets}, f, indent=1, ensure_ascii=False)
    if stream:
        stream.write(markdown(rows, notes, print_rows, predictions, targets))
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
