#!/usr/bin/env python3
"""The communication fits' 90% intervals on the collected public logs (tests/fixtures/comm_logs).

For each log: `gpucal import` (with the flags the log needs, as tests/calibration/comm_fit_report.sh),
then per collectives group every 3rd distinct size (positions 1, 4, 7, ...) is removed from
collectives.csv, `gpucal fit` fits the rest, and `gpucal predict-comm --as json` predicts the removed
sizes with their 90% intervals. Reported per log, per log type (nccl, rccl, osu) and overall:
  - the median point error |predicted - measured| / measured of the chosen form, and of log-log
    interpolation between the same training sizes (per-size minimum times, extended beyond the
    largest with the last slope clamped to [0, 1] and flat below the smallest, as app/fit/fit_table.h);
  - the coverage of the 90% intervals: the share of held-out points with lo <= measured <= hi
    (target 85-95%).
p2p groups (osu_bw, osu_bibw, osu_latency) are not predicted by `gpucal predict-comm` and are left
out of the figures.

--check (the ctest): on the logs given, every group of the full fit has an `interval`, every
prediction has lo <= time <= hi, and intervals widen beyond the measured sizes (4x and 16x the
largest, 1/4 and 1/16 of the smallest: each wider than the one before and than the median in-range
interval). Exit 1 on a failed check, never on a missed coverage target (a result to report).

--recorded FILE: exit 1 when the report differs from FILE's table (its lines after the leading
`#` comments): the recorded figures are this code's on these logs, or the test says to rewrite them
with --out.

Usage: comm_intervals.py GPUCAL FIXTURE_DIR WORK_DIR [--logs a,b] [--check] [--out FILE] [--recorded FILE]
"""
import argparse
import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys

# Flags for the logs that do not carry these facts themselves (see each fixture's header).
IMPORT_FLAGS = {
    "nccl_h100_aws_p5_efa_2x8": ["--collective", "allreduce", "--ranks-per-node", "8",
                                 "--device", "NVIDIA H100 80GB HBM3"],
    "nccl_t4_aws_g4dn_efa_2x1": ["--collective", "allreduce"],
    "rccl_mi355x_aac14_pollara_2x8": ["--collective", "allreduce", "--device", "AMD Instinct MI355X"],
}
GROUP_KEYS = ("collective", "dtype", "nranks", "ranks_per_node", "nnodes")


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("FAILED: " + " ".join(cmd) + "\n" + done.stdout + done.stderr)
    return done.stdout


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def groups_of(rows):
    groups = {}
    for r in rows:
        if r.get("status") == "ok":
            groups.setdefault(tuple(r[k] for k in GROUP_KEYS), []).append(r)
    return groups


def heldout_sizes(rows):
    sizes = sorted({float(r["size_bytes"]) for r in rows})
    return {s for i, s in enumerate(sizes) if i % 3 == 1}


def loglog(train, size):
    """Log-log interpolation of the per-size minimum times (app/fit/fit_table.h's baseline)."""
    knots = {}
    for s, t in train:
        knots[s] = min(t, knots.get(s, math.inf))
    xs = sorted(knots)
    if size <= xs[0]:
        return knots[xs[0]]
    if size >= xs[-1]:
        a, b = xs[-2], xs[-1]
        k = min(1.0, max(0.0, math.log(knots[b] / knots[a]) / math.log(b / a)))
        return knots[b] * (size / b) ** k
    for a, b in zip(xs, xs[1:]):
        if a <= size <= b:
            u = math.log(size / a) / math.log(b / a)
            return math.exp((1 - u) * math.log(knots[a]) + u * math.log(knots[b]))
    raise ValueError(size)


def predict(gpucal, calibration, key, sizes):
    collective, dtype, nranks, rpn, nnodes = key
    out = run([gpucal, "predict-comm", calibration, "--collective", collective, "--dtype", dtype,
               "--nranks", nranks, "--nnodes", nnodes, "--ranks-per-node", rpn,
               "--size", ",".join(str(int(s)) for s in sizes), "--as", "json"])
    return json.loads(out)


def import_log(gpucal, fixtures, name, dest):
    # A name with its extension (an XLA table, tests/fixtures/xla_tables) is the file itself.
    path = os.path.join(fixtures, name if "." in name else name + ".log")
    run([gpucal, "import", path, "--out", dest] + IMPORT_FLAGS.get(name, []))


def evaluate_log(gpucal, fixtures, work, name):
    """The held-out points of one log: [(measured, predicted, lo, hi, loglog, size_bytes)]."""
    full = os.path.join(work, name, "full")
    import_log(gpucal, fixtures, name, full)
    csv_path = os.path.join(full, "collectives.csv")
    if not os.path.exists(csv_path):
        return None
    train_dir = os.path.join(work, name, "train")
    shutil.copytree(full, train_dir)
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    groups = groups_of(rows)
    held = {key: heldout_sizes(g) for key, g in groups.items()}
    with open(os.path.join(train_dir, "collectives.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            key = tuple(r[k] for k in GROUP_KEYS)
            if key in held and float(r["size_bytes"]) in held[key]:
                continue
            writer.writerow(r)
    run([gpucal, "fit", train_dir])
    points = []
    for key, g in groups.items():
        if not held[key]:
            continue
        train = [(float(r["size_bytes"]), float(r["time_us_median"])) for r in g
                 if float(r["size_bytes"]) not in held[key]]
        if len({s for s, _ in train}) < 2:
            continue
        sizes = sorted(held[key])
        predictions = {p["size_bytes"]: p for p in predict(gpucal, os.path.join(train_dir, "calibration.json"),
                                                            key, sizes)}
        for r in g:
            s = float(r["size_bytes"])
            if s not in held[key]:
                continue
            p = predictions[float(int(s))]
            interval = p["interval"]
            lo, hi = (interval["lo_s"] * 1e6, interval["hi_s"] * 1e6) if interval else (math.nan, math.nan)
            points.append((float(r["time_us_median"]), p["time_s"] * 1e6, lo, hi, loglog(train, s), s))
    return points


def summary(points):
    err = [abs(p - m) / m * 100 for m, p, *_ in points]
    base = [abs(b - m) / m * 100 for m, _, _, _, b, *_ in points]
    covered = [lo <= m <= hi for m, _, lo, hi, *_ in points if not math.isnan(lo)]
    return {"points": len(points), "median_err_pct": statistics.median(err), "median_loglog_pct": statistics.median(base),
            "coverage_pct": 100.0 * sum(covered) / len(covered) if covered else math.nan,
            "with_interval": len(covered)}


def check_log(gpucal, work, name):
    """The ctest's checks on the full fit of one log; returns the failures."""
    full = os.path.join(work, name, "full")
    run([gpucal, "fit", full])
    calibration = os.path.join(full, "calibration.json")
    with open(calibration) as f:
        doc = json.load(f)
    failures = []
    for g in doc["communication"]["collectives"] + doc["communication"]["p2p"]:
        iv = g.get("interval")
        if not isinstance(iv, dict) or "computed" not in iv or "level" not in iv:
            failures.append(f"{name}: a group has no interval object")
            continue
        if not iv["computed"]:
            continue
        for field in ("quantile_log", "rank", "residuals", "capped", "knots_size_bytes", "reference_gap_log2"):
            if field not in iv:
                failures.append(f"{name}: interval without {field}")
    for g in doc["communication"]["collectives"]:
        if not g["interval"].get("computed"):
            continue
        key = tuple(str(g[k]) for k in GROUP_KEYS)
        knots = g["interval"]["knots_size_bytes"]
        lo_s, hi_s = min(knots), max(knots)
        mids = [math.sqrt(a * b) for a, b in zip(knots, knots[1:])]
        below = lo_s / 16 >= 1  # sizes below the smallest, where a byte is still 16x apart
        beyond = [hi_s * 4, hi_s * 16] + ([lo_s / 4, lo_s / 16] if below else [])
        preds = predict(gpucal, calibration, key, [int(round(s)) for s in mids + beyond])
        width = []
        for p in preds:
            t, iv = p["time_s"], p["interval"]
            if iv is None or not iv["lo_s"] <= t * (1 + 1e-12) or not t <= iv["hi_s"] * (1 + 1e-12):
                failures.append(f"{name} {key}: size {p['size_bytes']}: not lo <= time <= hi: {iv} {t}")
                continue
            width.append(math.log(iv["hi_s"] / iv["lo_s"]))
        if len(width) != len(preds):
            continue
        inside = statistics.median(width[:len(mids)])
        up4, up16, *down = width[len(mids):]
        if not (up16 > up4 > inside):
            failures.append(f"{name} {key}: no widening above the sizes: {inside} {up4} {up16}")
        if below and not (down[1] > down[0] > inside):
            failures.append(f"{name} {key}: no widening below the sizes: {inside} {down[0]} {down[1]}")
    return failures


def log_type(name):
    return name.split("_")[0]


def report(results):
    lines = [f"{'log':40} {'points':>6} {'median_err%':>11} {'loglog%':>8} {'coverage%':>9}"]
    def row(label, s):
        lines.append(f"{label:40} {s['points']:6d} {s['median_err_pct']:11.2f} {s['median_loglog_pct']:8.2f} "
                     f"{s['coverage_pct']:9.1f}")
    for name, pts in results.items():
        row(name, summary(pts))
    lines.append("")
    for t in sorted({log_type(n) for n in results}):
        row("type " + t, summary([p for n, pts in results.items() if log_type(n) == t for p in pts]))
    everything = [p for pts in results.values() for p in pts]
    overall = summary(everything)
    row("overall", overall)
    verdict = "met" if 85 <= overall["coverage_pct"] <= 95 else "NOT met"
    lines.append(f"target 90% interval coverage in 85-95%: {verdict} ({overall['coverage_pct']:.1f}% of "
                 f"{overall['with_interval']} held-out points)")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpucal")
    ap.add_argument("fixtures")
    ap.add_argument("work")
    ap.add_argument("--logs", default="")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--out", default="")
    ap.add_argument("--recorded", default="")
    a = ap.parse_args()
    names = a.logs.split(",") if a.logs else sorted(f[:-4] for f in os.listdir(a.fixtures) if f.endswith(".log"))
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    results, failures = {}, []
    for name in names:
        pts = evaluate_log(a.gpucal, a.fixtures, a.work, name)
        if pts:
            results[name] = pts
        if a.check:
            failures += check_log(a.gpucal, a.work, name)
    text = report(results)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    if a.recorded:
        with open(a.recorded) as f:
            recorded = [line.rstrip("\n") for line in f if not line.startswith("#")]
        if recorded != text.split("\n"):
            failures.append(f"{a.recorded} is not this report (rewrite its table with --out, keeping its "
                            f"# header): " + next((f"recorded {r!r}, now {t!r}" for r, t in
                                                   zip(recorded, text.split("\n")) if r != t),
                                                  f"{len(recorded)} recorded lines, {len(text.splitlines())} now"))
    for f in failures:
        print("CHECK FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
