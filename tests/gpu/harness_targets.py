"""The GPU reference's harness targets, from the harness/ subfolder of a results folder (files written
by .ci/gpu-check's harness part; an absent file is `not measured`) and, for telemetry, from
every gpucal CSV of the folder and its subfolders:

  harness/repeat-1.csv ... repeat-5.csv   the same bench_gemm points, one process each
  harness/cold_hot-cold.csv, cold_hot-hot.csv  bench_gemm bf16 1024³, --regime cold and hot
                                          (or both in one harness/cold_hot.csv)
  harness/sanitizer.json                  {"runs": [{"tool", "target", "rc", "errors", "seconds", "status"}]}
                                          (or the bare list)
  harness/suites.json                     {"suites": [{"suite", "seconds", "rc", "benches": {bench: s}}]}
"""
import json
import os
import statistics

from ratio_targets import REPEAT_MIN_US, REPEATS, TARGET_BY_ID, result
from results_folder import gpucal_rows, is_ok, number, read_csv

HARNESS = "harness"


def harness_file(results_dir, name):
    return os.path.join(results_dir, HARNESS, name)


def absent(target_id, results_dir, *names):
    """A not-measured result naming the first absent file, or None when all are there."""
    for name in names:
        if not os.path.exists(harness_file(results_dir, name)):
            return result(target_id, "not measured", why=f"{HARNESS}/{name} absent")
    return None


def ok_medians(path):
    return {r["point"]: number(r["time_us_median"]) for r in read_csv(path) if is_ok(r)}


def repeat_spread(results_dir):
    """Per point ok in all 5 files with a median of medians >= 100 us: (max - min) / median."""
    tid, t = "harness_repeat_spread", TARGET_BY_ID["harness_repeat_spread"]
    names = [f"repeat-{i}.csv" for i in range(1, REPEATS + 1)]
    if (missing := absent(tid, results_dir, *names)) is not None:
        return missing
    runs = [ok_medians(harness_file(results_dir, n)) for n in names]
    common = set(runs[0]).intersection(*runs[1:])
    spreads, short = {}, 0
    for point in sorted(common):
        medians = [run[point] for run in runs]
        mid = statistics.median(medians)
        if mid < REPEAT_MIN_US:
            short += 1
            continue
        spreads[point] = (max(medians) - min(medians)) / mid
    note = f"{len(common)} points ok in all {REPEATS} runs, {short} below {REPEAT_MIN_US:g} µs not counted"
    if not spreads:
        return result(tid, "not measured", why=f"no point of ≥ {REPEAT_MIN_US:g} µs in all {REPEATS} runs ({note})")
    worst = max(spreads, key=spreads.get)
    over = [p for p, s in spreads.items() if s > t.threshold]
    text = f"worst {spreads[worst] * 100:.2f}% at {worst}; {len(over)} of {len(spreads)} above {t.threshold * 100:g}%"
    return result(tid, "missed" if over else "met", text, spreads[worst], len(spreads), note,
                  [{"point": p, "value": s} for p, s in sorted(spreads.items())])


COLD_HOT_FILES = (("cold_hot.csv",), ("cold_hot-cold.csv", "cold_hot-hot.csv"))


def cold_slower(results_dir):
    """Pairs of points that differ only in the last segment, cold and hot: cold / hot > 1."""
    tid = "harness_cold_slower"
    names = next((n for n in COLD_HOT_FILES if all(os.path.exists(harness_file(results_dir, x)) for x in n)), None)
    if names is None:
        return absent(tid, results_dir, *COLD_HOT_FILES[1])
    medians = {}
    for name in names:
        medians.update(ok_medians(harness_file(results_dir, name)))
    pairs = {p[:-len("/cold")]: (medians[p], medians.get(p[:-len("/cold")] + "/hot")) for p in medians if p.endswith("/cold")}
    pairs = {k: c / h for k, (c, h) in pairs.items() if h}
    if not pairs:
        return result(tid, "not measured", why=f"no ok pair of /cold and /hot points in {HARNESS}/{', '.join(names)}")
    worst = min(pairs, key=pairs.get)
    slower = [k for k, v in pairs.items() if v <= 1]
    text = f"cold / hot {pairs[worst]:.3f} at {worst}" + (f" (min of {len(pairs)} pairs)" if len(pairs) > 1 else "")
    return result(tid, "missed" if slower else "met", text, pairs[worst], len(pairs),
                  f"cold not slower at {', '.join(slower)}" if slower else "",
                  [{"point": k, "value": v} for k, v in sorted(pairs.items())])


def telemetry(results_dir):
    """Ok rows of every gpucal CSV under the folder with both sm_clock_mhz and power_w filled."""
    tid = "harness_telemetry"
    total, unfilled = 0, {}
    for root, dirs, _ in os.walk(results_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for r in gpucal_rows(root):
            if not is_ok(r):
                continue
            total += 1
            if not (r.get("sm_clock_mhz") or "").strip() or not (r.get("power_w") or "").strip():
                name = os.path.relpath(os.path.join(root, r["_file"]), results_dir)
                unfilled[name] = unfilled.get(name, 0) + 1
    if not total:
        return result(tid, "not measured", why="no ok gpucal row in the folder")
    bad = sum(unfilled.values())
    frac = (total - bad) / total
    text = f"{total - bad} of {total} ok rows filled ({frac * 100:.1f}%)"
    why = "unfilled: " + ", ".join(f"{n} ({c})" for n, c in sorted(unfilled.items())) if unfilled else ""
    return result(tid, "met" if not bad else "missed", text, frac, total, why,
                  [{"file": n, "unfilled_rows": c} for n, c in sorted(unfilled.items())])


def sanitizer(results_dir):
    tid = "sanitizer_clean"
    if (missing := absent(tid, results_dir, "sanitizer.json")) is not None:
        return missing
    with open(harness_file(results_dir, "sanitizer.json")) as f:
        entries = json.load(f)
    entries = entries.get("runs", []) if isinstance(entries, dict) else entries
    if not isinstance(entries, list) or not entries:
        return result(tid, "not measured", why=f"{HARNESS}/sanitizer.json holds no entry")
    bad = [e for e in entries if e.get("errors") != 0 or e.get("rc") != 0 or e.get("status", "ok") != "ok"]
    tools = {e.get("tool") for e in entries}
    lacking = [tool for tool in ("memcheck", "racecheck") if tool not in tools]
    text = f"{len(entries)} runs ({', '.join(sorted(str(x) for x in tools))}), {len(bad)} not clean"
    why = "; ".join(f"{e.get('tool')} {e.get('target')}: errors {e.get('errors')}, rc {e.get('rc')}, "
                    f"{e.get('status')}" for e in bad[:4])
    if lacking:
        why = "; ".join(x for x in (why, f"no {' or '.join(lacking)} run") if x)
    verdict = "missed" if bad else "incomplete" if lacking else "met"
    return result(tid, verdict, text, len(bad), len(entries), why, bad)


def suites(results_dir):
    tid = "suite_durations"
    if (missing := absent(tid, results_dir, "suites.json")) is not None:
        return missing
    with open(harness_file(results_dir, "suites.json")) as f:
        entries = json.load(f).get("suites", [])
    if not entries:
        return result(tid, "not measured", why=f"{HARNESS}/suites.json lists no suite")
    text = "; ".join(f"{e.get('suite')} {e.get('seconds', 0):.0f} s" + (f" (exit {e['rc']})" if e.get("rc") else "")
                     for e in entries)
    failed = [str(e.get("suite")) for e in entries if e.get("rc")]
    return result(tid, "incomplete" if failed else "recorded", text, None, len(entries),
                  f"failed: {', '.join(failed)}" if failed else "", entries)
