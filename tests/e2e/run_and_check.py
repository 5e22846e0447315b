#!/usr/bin/env python3
"""Runs a bench command and checks what it wrote: exit code, the calibration CSV (fixed
columns, statuses, positive times, verification), the JSON sidecar and the samples file.
Exit 77 (CTest skip) when the command asked for a GPU backend and the machine has none, or
fewer than its --threads N rank threads need.

usage: run_and_check.py [checks] -- COMMAND...
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

SKIP = 77


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def too_few_devices(stderr):
    """The bench refused the GPU backend for want of devices: none at all, not compiled in,
    or fewer than `--threads N` rank threads need (one device each)."""
    return skip_reason(stderr, "gpu") is not None


def skip_reason(stderr, gpu):
    """Why a GPU test skips, from the bench's refusal; None when it did not refuse. A reason
    that starts "SKIP(hardware):" is one a machine WITH a GPU may give (it has too few of
    them); any other skip on a GPU machine is a failure for .ci/gpu-check."""
    m = re.search(r"--threads (\d+) but backend '\w+' has (\d+) usable device\(s\)", stderr)
    if m and int(m.group(2)) > 0:
        return f"SKIP(hardware): needs {m.group(1)} GPUs, this machine has {m.group(2)}"
    if "0 usable device" in stderr or "not compiled into this build" in stderr or m:
        return f"SKIP: no {gpu} device here"
    return None


def run_bench(cmd, csv_path=None, gpu=None, expect_rc=0, stderr_contains=(), stderr_lines=None, timeout=1200):
    """Removes csv_path and its sidecars, runs cmd and echoes the tails of its output; exits 77
    when gpu is set and the bench found too few devices; fails unless the exit code is
    expect_rc (an int, or "nonzero"), stderr has every stderr_contains, and (when given)
    stderr_lines lines are the bench's own. Returns the completed process."""
    if csv_path:
        for path in (csv_path, csv_path[:-4] + ".json", csv_path[:-4] + ".samples.csv"):
            if os.path.exists(path):
                os.remove(path)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    sys.stdout.write(proc.stdout[-4000:])
    sys.stderr.write(proc.stderr[-4000:])
    reason = skip_reason(proc.stderr, gpu) if gpu else None
    if reason:
        print(reason)
        sys.exit(SKIP)
    if expect_rc == "nonzero":
        if proc.returncode == 0:
            fail("exit code 0, expected non-zero")
    elif proc.returncode != int(expect_rc):
        fail(f"exit code {proc.returncode}, expected {expect_rc}")
    for s in stderr_contains:
        if s not in proc.stderr:
            fail(f"stderr lacks {s!r}")
    if stderr_lines is not None:
        # Google Benchmark's context block goes to stderr too; count only our own lines.
        ours = [l for l in proc.stderr.splitlines() if l.startswith("bench_") or l.startswith("gpucal")]
        if len(ours) != stderr_lines:
            fail(f"expected {stderr_lines} error line(s), got {ours}")
    return proc


def sm_number(arch):
    m = re.match(r"sm_(\d+)", arch or "")
    return int(m.group(1)) if m else None


def check_required_rows(rows, specs, min_arch, device_arch):
    """Each spec (NAME=VALUE,...) must match at least one row; with min_arch, only on a
    device of that arch or newer (an older one is said, not failed)."""
    if not specs:
        return
    if min_arch and (sm_number(device_arch) or 0) < (sm_number(min_arch) or 0):
        print(f"NOTE: {device_arch or 'this device'} is older than {min_arch}: rows {specs} not required")
        return
    for spec in specs:
        want = dict(kv.split("=", 1) for kv in spec.split(","))
        if not any(all(r.get(k) == v for k, v in want.items()) for r in rows):
            near = [f"{r['point']}: {r['status']} {r.get('status_detail', '')}" for r in rows
                    if all(r.get(k) == v for k, v in want.items() if k not in ("status", "verified"))]
            fail(f"no row with {spec}; the candidates: {near[:5] or 'none'}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", help="CSV the command writes (removed first)")
    ap.add_argument("--expect-rc", type=int, default=0)
    ap.add_argument("--expect-rows", type=int, help="exact number of rows")
    ap.add_argument("--expect-status", help="every row has this status")
    ap.add_argument("--expect-verified", help="every row has this verified value")
    ap.add_argument("--expect-column", action="append", default=[], help="NAME=VALUE that every row has")
    ap.add_argument("--require-columns", default="", help="comma-separated columns that must exist and be non-empty")
    ap.add_argument("--stderr-contains", action="append", default=[])
    ap.add_argument("--stderr-lines", type=int, help="exact number of non-empty stderr lines")
    ap.add_argument("--gpu", help="cuda|hip: skip (77) when the command reports no such device")
    ap.add_argument("--positive-times", action="store_true", help="time_us_* > 0 on ok rows")
    ap.add_argument("--require-row", action="append", default=[],
                    help="NAME=VALUE,NAME=VALUE...: at least one row has all of these")
    ap.add_argument("--require-row-min-arch",
                    help="sm_XY: --require-row applies only on devices of this arch or newer (sidecar device.arch)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    run_bench(cmd, a.csv, a.gpu, a.expect_rc, a.stderr_contains, a.stderr_lines)
    if not a.csv:
        return
    if not os.path.exists(a.csv):
        fail(f"{a.csv} not written")
    with open(a.csv, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        rows = list(reader)
    for col in ["schema_version", "bench", "point", "status", "time_us_median", "verified"] + \
            [c for c in a.require_columns.split(",") if c]:
        if col not in header:
            fail(f"column {col} missing")
    if a.expect_rows is not None and len(rows) != a.expect_rows:
        fail(f"{len(rows)} rows, expected {a.expect_rows}")
    if not rows:
        fail("no rows")
    points = [r["point"] for r in rows]
    if len(set(points)) != len(points):
        fail("duplicate point keys")
    for r in rows:
        if r["schema_version"] != "2":  # core/output/csv_sink.h kCsvSchemaVersion
            fail("schema_version != 2")
        if a.expect_status and r["status"] != a.expect_status:
            fail(f"{r['point']}: status {r['status']} ({r['status_detail']}), expected {a.expect_status}")
        if a.expect_verified and r["verified"] != a.expect_verified:
            fail(f"{r['point']}: verified {r['verified']}, expected {a.expect_verified}")
        for kv in a.expect_column:
            k, v = kv.split("=", 1)
            if r.get(k) != v:
                fail(f"{r['point']}: {k}={r.get(k)!r}, expected {v!r}")
        if r["status"] == "ok":
            for c in [c for c in a.require_columns.split(",") if c]:
                if r[c] == "":
                    fail(f"{r['point']}: {c} empty")
            if a.positive_times:
                for c in ("time_us_median", "time_us_p10", "time_us_p90", "time_us_min"):
                    if not float(r[c]) > 0:
                        fail(f"{r['point']}: {c}={r[c]}")
                if not float(r["time_us_p10"]) <= float(r["time_us_median"]) <= float(r["time_us_p90"]):
                    fail(f"{r['point']}: p10 <= median <= p90 violated")
    meta_path = a.csv[:-4] + ".json"
    if not os.path.exists(meta_path):
        fail("JSON sidecar missing")
    meta = json.load(open(meta_path))
    check_required_rows(rows, a.require_row, a.require_row_min_arch, meta.get("device", {}).get("arch", ""))
    for key in ("device", "gpucal", "command_line", "start_time", "end_time", "libraries"):
        if key not in meta:
            fail(f"sidecar lacks {key}")
    if meta.get("rows") != len(rows):
        fail(f"sidecar rows {meta.get('rows')} != {len(rows)}")
    samples = a.csv[:-4] + ".samples.csv"
    ok_rows = [r for r in rows if r["status"] == "ok"]
    with open(samples, newline="") as f:
        counts = {}
        for s in csv.DictReader(f):
            counts[s["point"]] = counts.get(s["point"], 0) + 1
    for r in ok_rows:
        if counts.get(r["point"], 0) != int(r["samples"]):
            fail(f"{r['point']}: samples file has {counts.get(r['point'], 0)}, row says {r['samples']}")
    print(f"OK: {len(rows)} rows checked")


if __name__ == "__main__":
    main()
