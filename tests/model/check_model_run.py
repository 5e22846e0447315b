#!/usr/bin/env python3
"""Runs a bench with --model and checks that it ran exactly its share of the step: the
operations `BENCH ... --list` derives (run first, without the launcher) against the rows the
run wrote. Every listed operation has one row per implementation, with the same op_role,
calls_per_step and shape cells, status ok and verified ok; listed operations without a row
must be in the sidecar's model.skipped (their number is --expect-skipped); the sidecar holds
the derivation (model.layout, model.facts, model.ops).

usage: check_model_run.py --csv FILE [--launcher "mpirun -np 2"] [--expect-skipped N]
                          [--expect-rows N] -- BENCH ARGS...
"""
import argparse
import csv
import io
import json
import os
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from run_and_check import fail, run_bench  # noqa: E402

# Shape keys of --list that are not CSV cells.
NOT_CELLS = {"group"}


def listed_ops(cmd):
    proc = subprocess.run(cmd + ["--list"], capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        fail(f"--list exited {proc.returncode}: {proc.stderr.strip()}")
    body = "\n".join(l for l in proc.stdout.splitlines() if not l.startswith("#"))
    ops = list(csv.DictReader(io.StringIO(body)))
    if not ops:
        fail("--list printed no operations")
    roles = [o["op_role"] for o in ops]
    if len(set(roles)) != len(roles):
        fail(f"--list repeats a role: {roles}")
    return {o["op_role"]: o for o in ops}


def shape_cells(shape):
    return dict(kv.split("=", 1) for kv in shape.split() if kv.split("=", 1)[0] not in NOT_CELLS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--launcher", default="")
    ap.add_argument("--expect-skipped", type=int, default=0)
    ap.add_argument("--expect-rows", type=int)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    bench_args = [x for x in cmd if x not in ("--out", a.csv)]
    expected = listed_ops(bench_args)
    run_bench(shlex.split(a.launcher) + cmd, a.csv)

    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if a.expect_rows is not None and len(rows) != a.expect_rows:
        fail(f"{len(rows)} rows, expected {a.expect_rows}")
    seen = set()
    for r in rows:
        role = r["op_role"]
        if role not in expected:
            fail(f"row {r['point']}: op_role {role!r} is not one of the listed operations")
        op = expected[role]
        if r["calls_per_step"] != op["calls_per_step"]:
            fail(f"{role}: calls_per_step {r['calls_per_step']} != listed {op['calls_per_step']}")
        for cell, value in shape_cells(op["shape"]).items():
            if cell in r and r[cell] != value:
                fail(f"{role}: cell {cell}={r[cell]!r}, listed {value!r}")
        if r.get("dtype") and r["dtype"] != op["dtype"]:
            fail(f"{role}: dtype {r['dtype']} != listed {op['dtype']}")
        if r["status"] != "ok" or r["verified"] != "ok":
            fail(f"{role}: status {r['status']} verified {r['verified']} ({r['status_detail']})")
        if not float(r["time_us_median"]) > 0:
            fail(f"{role}: time_us_median {r['time_us_median']}")
        seen.add(role)

    with open(a.csv[:-4] + ".json") as f:
        meta = json.load(f)
    model = meta.get("model")
    if not model:
        fail("sidecar has no model section")
    for key in ("layout", "facts", "ops", "model", "notes"):
        if key not in model:
            fail(f"sidecar model section lacks {key}")
    skipped = {s["op_role"] for s in model.get("skipped", [])}
    if len(skipped) != a.expect_skipped:
        fail(f"{len(skipped)} skipped operations ({sorted(skipped)}), expected {a.expect_skipped}")
    missing = set(expected) - seen - skipped
    if missing:
        fail(f"listed operations without a row and not reported skipped: {sorted(missing)}")
    if seen & skipped:
        fail(f"operations both run and skipped: {sorted(seen & skipped)}")
    print(f"OK: {len(rows)} rows for {len(seen)} operations, {len(skipped)} skipped")


if __name__ == "__main__":
    main()
