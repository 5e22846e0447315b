#!/usr/bin/env python3
"""Runs bench_collectives (usually under mpirun) and checks what it wrote against the
collective conventions: nccl-tests bus factors, wrong == 0, one row per point, the
expected collectives at the expected rank counts, and node facts.

usage: check_collectives.py [checks] -- COMMAND...
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from run_and_check import run_bench  # noqa: E402  (one way to run a bench and check its exit and stderr)

FACTOR = {  # docs/field-reference.md, nccl-tests conventions
    "allreduce": lambda n: 2 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}
FIT_COLUMNS = ["collective", "dtype", "nranks", "ranks_per_node", "nnodes", "spans_nodes", "size_bytes", "count",
               "time_us_median", "algbw_gbps", "busbw_gbps", "status"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    ap.add_argument("--expect-rc", default="0", help="an exit code, or 'nonzero'")
    ap.add_argument("--expect-rows", type=int)
    ap.add_argument("--min-rows", type=int)
    ap.add_argument("--max-rows", type=int)
    ap.add_argument("--all-ok", action="store_true",
                    help="every row ok with wrong=0, except skips for sizes below one element per rank")
    ap.add_argument("--expect-collectives", default="", help="collectives that must each have ok rows at every --expect-ranks")
    ap.add_argument("--expect-ranks", default="")
    ap.add_argument("--expect-verified", help="every row has this verified value")
    ap.add_argument("--expect-column", action="append", default=[], help="NAME=VALUE on every row (of nranks=N: N:NAME=VALUE)")
    ap.add_argument("--stderr-contains", action="append", default=[])
    ap.add_argument("--stderr-lines", type=int, help="stderr lines from the bench itself (starting with bench_)")
    ap.add_argument("--gpu", help="cuda|hip: exit 77 (CTest skip) when the command reports no such device")
    ap.add_argument("--expect-impl", help="every row has this impl")
    ap.add_argument("--expect-world", help="the sidecar's world kind (mpi, threads, single)")
    ap.add_argument("--expect-thread-level", help="the sidecar's world.mpi_thread_level")
    ap.add_argument("--expect-malloc", help="the sidecar's malloc.policy (pinned, glibc, user)")
    ap.add_argument("--max-time-ratio", action="append", default=[],
                    help="A/B<=X: collective A's time_us_median is at most X times B's at every shared size_bytes")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    run_bench(cmd, a.csv, a.gpu, a.expect_rc, a.stderr_contains, a.stderr_lines, timeout=600)
    if not a.csv:
        print("OK")
        return
    if not os.path.exists(a.csv):
        fail(f"{a.csv} not written")
    with open(a.csv, newline="") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, list(reader)
    for col in FIT_COLUMNS + ["wrong", "bus_factor", "time_us_rank_spread", "graph", "in_place", "op", "root"]:
        if col not in header:
            fail(f"column {col} missing")
    if a.expect_rows is not None and len(rows) != a.expect_rows:
        fail(f"{len(rows)} rows, expected {a.expect_rows}")
    if a.min_rows is not None and len(rows) < a.min_rows:
        fail(f"{len(rows)} rows, expected at least {a.min_rows}")
    if a.max_rows is not None and len(rows) > a.max_rows:
        fail(f"{len(rows)} rows, expected at most {a.max_rows}")
    points = [r["point"] for r in rows]
    if len(set(points)) != len(points):
        fail("duplicate point keys")
    for r in rows:
        n = int(r["nranks"])
        if a.expect_impl and r["impl"] != a.expect_impl:
            fail(f"{r['point']}: impl {r['impl']}, expected {a.expect_impl}")
        if a.expect_verified and r["verified"] != a.expect_verified:
            fail(f"{r['point']}: verified {r['verified']}, expected {a.expect_verified}")
        for kv in a.expect_column:
            scope, _, kv2 = kv.rpartition(":")
            if scope and int(scope) != n:
                continue
            k, v = kv2.split("=", 1)
            if r.get(k) != v:
                fail(f"{r['point']}: {k}={r.get(k)!r}, expected {v!r}")
        if abs(float(r["bus_factor"]) - FACTOR[r["collective"]](n)) > 1e-6:
            fail(f"{r['point']}: bus_factor {r['bus_factor']}")
        esize = {"fp64": 8, "fp32": 4, "int32": 4, "fp16": 2, "bf16": 2}.get(r["dtype"], 1)
        if int(r["count_total"]) * esize != int(r["size_bytes"]):
            fail(f"{r['point']}: count_total * sizeof != size_bytes")
        # nccl-tests: count is per rank (per peer for alltoall) where S is split by rank, each
        # rank's block rounded down to 16 B; size_bytes is what ran, never above the request.
        split = r["collective"] in ("allgather", "reduce_scatter", "alltoall")
        align = max(1, 16 // esize)
        requested = int(r["size_bytes_requested"])
        expected_count = (requested // esize // n) // align * align if split else requested // esize
        if int(r["count"]) != expected_count:
            fail(f"{r['point']}: count {r['count']}, nccl-tests would print {expected_count}")
        if int(r["size_bytes"]) != (expected_count * n if split else expected_count) * esize:
            fail(f"{r['point']}: size_bytes {r['size_bytes']} is not what nccl-tests runs for {requested}")
        if a.all_ok:
            if r["status"] == "skipped" and "rounds to 0 elements per rank" in r["status_detail"] and expected_count == 0:
                continue
            if r["status"] != "ok" or r["wrong"] != "0" or r["verified"] != "ok":
                fail(f"{r['point']}: status {r['status']} wrong {r['wrong']} verified {r['verified']} ({r['status_detail']})")
        if r["status"] == "ok":
            t = float(r["time_us_median"])
            algbw = float(r["size_bytes"]) / (t * 1e-6) / 1e9
            if not (t > 0 and abs(float(r["algbw_gbps"]) - algbw) <= 1e-5 * algbw + 1e-9):
                fail(f"{r['point']}: algbw {r['algbw_gbps']} != S/t {algbw}")
            if abs(float(r["busbw_gbps"]) - float(r["algbw_gbps"]) * float(r["bus_factor"])) > 1e-5 * float(r["busbw_gbps"]) + 1e-9:
                fail(f"{r['point']}: busbw != algbw * factor")
            if not float(r["time_us_p10"]) <= t <= float(r["time_us_p90"]) or float(r["time_us_rank_spread"]) < 0:
                fail(f"{r['point']}: p10 <= median <= p90 or spread >= 0 violated")
    if a.expect_collectives:
        for c in a.expect_collectives.split(","):
            for n in a.expect_ranks.split(","):
                if not any(r["collective"] == c and r["nranks"] == n and r["status"] == "ok" for r in rows):
                    fail(f"no ok row for {c} at {n} ranks")
    meta_path = a.csv[:-4] + ".json"
    if a.expect_rc == "0":
        meta = json.load(open(meta_path))
        if meta.get("rows") != len(rows) or "world" not in meta or "libraries" not in meta:
            fail("sidecar rows/world/libraries wrong")
        if a.expect_world and meta["world"].get("kind") != a.expect_world:
            fail(f"sidecar world kind {meta['world'].get('kind')!r}, expected {a.expect_world!r}")
        if a.expect_malloc and meta.get("malloc", {}).get("policy") != a.expect_malloc:
            fail(f"sidecar malloc {meta.get('malloc')!r}, expected policy {a.expect_malloc!r}")
        if a.expect_thread_level and meta["world"].get("mpi_thread_level") != a.expect_thread_level:
            fail(f"sidecar mpi_thread_level {meta['world'].get('mpi_thread_level')!r}, expected {a.expect_thread_level!r}")
    for spec in a.max_time_ratio:
        pair, limit = spec.split("<=")
        num, den = pair.split("/")
        times = {}
        for r in rows:
            if r["status"] == "ok":
                times[(r["collective"], r["size_bytes"])] = float(r["time_us_median"])
        shared = [s for (c, s) in times if c == num and (den, s) in times]
        if not shared:
            fail(f"--max-time-ratio {spec}: no size with ok rows of both")
        for s in shared:
            ratio = times[(num, s)] / times[(den, s)]
            print(f"{num}/{den} at {s} B: {ratio:.2f}")
            if ratio > float(limit):
                fail(f"{num} takes {ratio:.1f}x {den}'s time at {s} B (limit {limit})")
    print(f"OK: {len(rows)} rows checked")


if __name__ == "__main__":
    main()
