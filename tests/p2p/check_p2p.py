#!/usr/bin/env python3
"""Runs tests/e2e/run_and_check.py (all its checks apply) and then checks what is particular
to bench_p2p: bandwidth_gbps = bytes_counted / time_us_median / 1e3 on ok rows, bytes_counted
from the rule (2 x size for d2d/h2h/bi/pingpong), wrong = 0, latency_us = time_us_median / 2
on ok pingpong rows and empty on every other row, and the pair matrix in the sidecar.

usage: check_p2p.py [--matrix N] [--link-class SRC,DST=CLASS ...] [--detail-contains TEXT]
                    [--expect-patterns P,...] [--expect-rails SRC-DST,...] [--aborted-csv FILE]
                    [run_and_check options] -- COMMAND...
--expect-rails: the rails rows, in rail order, pair exactly these ranks (rail i = the i-th item),
on two different nodes, both ways (direction bi), at every size.
--aborted-csv: a run that was aborted (watchdog) leaves its rows in FILE.csv.partial and a
sidecar without its end in FILE.json.partial; only
the rows are checked (every one ok, --expect-rows of them).
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_AND_CHECK = os.path.join(HERE, "..", "e2e", "run_and_check.py")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--matrix", type=int, help="the sidecar's p2p_matrix is N x N with a null diagonal")
    ap.add_argument("--link-class", action="append", default=[], help="SRC,DST=CLASS in the matrix")
    ap.add_argument("--detail-contains", help="every row's status_detail contains this")
    ap.add_argument("--expect-patterns", help="comma-separated: the patterns the rows have, exactly")
    ap.add_argument("--expect-rails", help="SRC-DST,...: rail i's ranks")
    ap.add_argument("--aborted-csv")
    ap.add_argument("--expect-rows", type=int)
    ap.add_argument("--csv")
    a, rest = ap.parse_known_args()
    if a.aborted_csv and os.path.exists(a.aborted_csv):
        os.remove(a.aborted_csv)
    rows_arg = [f"--expect-rows={a.expect_rows}"] if a.expect_rows is not None and a.csv else []
    args = ([f"--csv={a.csv}"] if a.csv else []) + rows_arg + rest
    rc = subprocess.run([sys.executable, RUN_AND_CHECK] + args).returncode
    if rc != 0:
        sys.exit(rc)
    if a.aborted_csv:
        with open(a.aborted_csv, newline="") as f:
            rows = list(csv.DictReader(f))
        if a.expect_rows is not None and len(rows) != a.expect_rows:
            fail(f"{len(rows)} rows kept, expected {a.expect_rows}")
        for r in rows:
            if r["status"] != "ok" or r["verified"] != "ok":
                fail(f"{r['point']}: status {r['status']}, verified {r['verified']}")
        print(f"OK: {len(rows)} rows kept by the aborted run")
        return
    if not a.csv:
        return
    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if a.detail_contains and a.detail_contains not in r["status_detail"]:
            fail(f"{r['point']}: status_detail {r['status_detail']!r} lacks {a.detail_contains!r}")
    if a.expect_patterns and {r["pattern"] for r in rows} != set(a.expect_patterns.split(",")):
        fail(f"patterns {sorted({r['pattern'] for r in rows})}, expected {a.expect_patterns}")
    if a.expect_rails:
        want = [tuple(int(x) for x in pair.split("-")) for pair in a.expect_rails.split(",")]
        sizes = {r["size_bytes"] for r in rows if r["pattern"] == "rails"}
        for r in (r for r in rows if r["pattern"] == "rails"):
            rail = int(re.search(r"/rail(\d+)/", r["point"]).group(1))
            if rail >= len(want) or (int(r["src_rank"]), int(r["dst_rank"])) != want[rail]:
                fail(f"{r['point']}: ranks {r['src_rank']}-{r['dst_rank']}, expected {want[rail] if rail < len(want) else 'no such rail'}")
            if r["src_node"] == r["dst_node"] or r["direction"] != "bi" or r["link_class"] != "network":
                fail(f"{r['point']}: nodes {r['src_node']}/{r['dst_node']}, {r['direction']}, {r['link_class']}")
        n_rails = sum(1 for r in rows if r["pattern"] == "rails")
        if n_rails != len(want) * len(sizes) or not sizes:
            fail(f"{n_rails} rails rows, expected {len(want)} rails x {len(sizes)} sizes")
    for r in rows:
        size = int(r["size_bytes"])
        factor = 2 if r["direction"] in ("d2d", "h2h", "bi", "pingpong") else 1
        if int(r["bytes_counted"]) != factor * size:
            fail(f"{r['point']}: bytes_counted {r['bytes_counted']} for {r['direction']} of {size} bytes")
        has_latency = r["status"] == "ok" and r["pattern"] == "pingpong"
        if not has_latency and r["latency_us"] != "":
            fail(f"{r['point']}: latency_us {r['latency_us']!r} on a {r['status']} {r['pattern']} row")
        if r["status"] != "ok":
            continue
        if has_latency:
            half = float(r["time_us_median"]) / 2  # osu_latency: half the round trip
            if not float(r["latency_us"]) > 0 or abs(float(r["latency_us"]) - half) > 1e-5 * half:
                fail(f"{r['point']}: latency_us {r['latency_us']} != time_us_median / 2 = {half}")
        if r["wrong"] != "0":
            fail(f"{r['point']}: wrong={r['wrong']} on an ok row")
        expect = int(r["bytes_counted"]) / float(r["time_us_median"]) / 1e3
        if abs(float(r["bandwidth_gbps"]) - expect) > 1e-5 * expect + 1e-12:
            fail(f"{r['point']}: bandwidth_gbps {r['bandwidth_gbps']} != bytes_counted/time = {expect}")
    if a.matrix is not None:
        meta = json.load(open(a.csv[:-4] + ".json"))
        m = meta.get("p2p_matrix")
        if m is None:
            fail("sidecar lacks p2p_matrix")
        n = a.matrix
        for key in ("bandwidth_gbps", "latency_us", "link_class"):
            grid = m[key]
            if len(grid) != n or any(len(row) != n for row in grid):
                fail(f"p2p_matrix.{key} is not {n} x {n}")
            for i in range(n):
                for j in range(n):
                    v = grid[i][j]
                    if i == j and v is not None:
                        fail(f"p2p_matrix.{key}[{i}][{i}] = {v}, expected null")
                    if i != j and (v is None or (key != "link_class" and not v > 0)):
                        fail(f"p2p_matrix.{key}[{i}][{j}] = {v}")
        sizes = sorted(int(r["size_bytes"]) for r in rows if r["pattern"] == "pairs")
        if m["bandwidth_size_bytes"] != sizes[-1] or m["latency_size_bytes"] != sizes[0]:
            fail("p2p_matrix sizes are not the largest and smallest pairs sizes")
        for spec in a.link_class:
            pair, cls = spec.split("=")
            i, j = (int(x) for x in pair.split(","))
            if m["link_class"][i][j] != cls:
                fail(f"p2p_matrix.link_class[{i}][{j}] = {m['link_class'][i][j]}, expected {cls}")
    print("OK: p2p checks")


if __name__ == "__main__":
    main()
