#!/usr/bin/env python3
"""Runs tests/e2e/run_and_check.py (all its checks apply) and then checks what is particular
to bench_memory: bandwidth_gbps = bytes / time_us_median / 1e3 on ok rows; the bytes of every
row against the closed forms of docs/bench_memory.md (recomputed here from the row's own cells); tflops
= flops / time on fma_chain rows; fraction_of_copy = bandwidth_gbps / copy_gbps where set.

usage: check_memory.py [--expect-status-in S,...] [--expect-verified-in V,...] [--every-kernel]
                       [--skips-only KERNEL:DTYPE,...] [--fraction-of-copy]
                       [--list-keys N] [--list-contains KEY] [run_and_check options] -- COMMAND...
--list-keys/--list-contains: the command is `bench_memory --list`; its stdout is checked.
"""
import argparse
import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from run_and_check import fail, run_bench  # noqa: E402

RUN_AND_CHECK = os.path.join(HERE, "..", "e2e", "run_and_check.py")
KERNELS = ["copy", "scale", "add", "triad", "read", "fma_chain", "layernorm_fwd", "layernorm_bwd", "rmsnorm_fwd",
           "rmsnorm_bwd", "softmax_fwd", "softmax_bwd", "gelu_fwd", "gelu_bwd", "swiglu_fwd", "swiglu_bwd",
           "residual_add", "dropout_residual_add", "cross_entropy_fwd", "cross_entropy_bwd", "adamw_step"]
SIZE = {"fp32": 4, "bf16": 2, "fp16": 2}


def expected_bytes(r):
    """The closed forms of docs/bench_memory.md (kernel_table.h derives them from its tensor table)."""
    k, s = r["kernel"], SIZE[r["dtype"]]
    if k in ("copy", "scale", "fma_chain"):
        return 2 * int(r["elements"]) * s
    if k in ("add", "triad"):
        return 3 * int(r["elements"]) * s
    if k == "read":
        n = int(r["elements"])
        return n * s + 4 * min(max(n // 4096, 1), 1024)
    if k == "adamw_step":
        return 7 * int(r["params"]) * s
    R, C = int(r["rows"]), int(r["cols"])
    rc = R * C * s
    return {"layernorm_fwd": 2 * rc + 2 * C * s + 8 * R, "layernorm_bwd": 3 * rc + 3 * C * s + 8 * R,
            "rmsnorm_fwd": 2 * rc + C * s + 4 * R, "rmsnorm_bwd": 3 * rc + 2 * C * s + 4 * R,
            "softmax_fwd": 2 * rc, "softmax_bwd": 3 * rc, "gelu_fwd": 2 * rc, "gelu_bwd": 3 * rc,
            "swiglu_fwd": 3 * rc, "swiglu_bwd": 5 * rc, "residual_add": 3 * rc, "dropout_residual_add": 3 * rc + R * C,
            "cross_entropy_fwd": rc + 12 * R, "cross_entropy_bwd": 2 * rc + 8 * R}[k]


def close(a, b, rel=1e-5):
    return abs(a - b) <= rel * abs(b) + 1e-12


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--expect-status-in")
    ap.add_argument("--expect-verified-in")
    ap.add_argument("--every-kernel", action="store_true")
    ap.add_argument("--skips-only")
    ap.add_argument("--ok-for", help="impl:kernel,... each needs at least one ok, verified row "
                    "(a run whose every point of a library skipped proves nothing)")
    ap.add_argument("--fraction-of-copy", action="store_true", help="some op rows carry fraction_of_copy")
    ap.add_argument("--list-keys", type=int)
    ap.add_argument("--list-contains")
    ap.add_argument("--csv")
    a, rest = ap.parse_known_args()
    if a.list_keys is not None or a.list_contains:
        cmd = rest[1:] if rest and rest[0] == "--" else rest
        proc = run_bench(cmd)
        keys = [l.split()[0] for l in proc.stdout.splitlines() if l and not l.startswith("#")]
        if a.list_keys is not None and len(keys) != a.list_keys:
            fail(f"--list printed {len(keys)} points, expected {a.list_keys}")
        if len(set(keys)) != len(keys):
            fail("--list printed duplicate keys")
        if a.list_contains and a.list_contains not in keys:
            fail(f"--list lacks {a.list_contains}")
        print(f"OK: {len(keys)} listed points")
        return
    args = ([f"--csv={a.csv}"] if a.csv else []) + rest
    rc = subprocess.run([sys.executable, RUN_AND_CHECK] + args).returncode
    if rc != 0:
        sys.exit(rc)
    if not a.csv:
        return
    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    skips_allowed = set(a.skips_only.split(",")) if a.skips_only else None
    for r in rows:
        if a.expect_status_in and r["status"] not in a.expect_status_in.split(","):
            fail(f"{r['point']}: status {r['status']} ({r['status_detail']})")
        # A point skipped in setup never reached verification: its verified cell stays empty.
        verified = r["verified"] or ("skipped" if r["status"] == "skipped" else "")
        if a.expect_verified_in and verified not in a.expect_verified_in.split(","):
            fail(f"{r['point']}: verified {r['verified']} ({r['status_detail']})")
        if skips_allowed is not None and r["status"] == "skipped" and f"{r['kernel']}:{r['dtype']}" not in skips_allowed:
            fail(f"{r['point']}: skipped ({r['status_detail']})")
        if int(r["bytes"]) != expected_bytes(r):
            fail(f"{r['point']}: bytes {r['bytes']}, closed form {expected_bytes(r)}")
        if r["status"] != "ok":
            continue
        t = float(r["time_us_median"])
        if not close(float(r["bandwidth_gbps"]), int(r["bytes"]) / t / 1e3):
            fail(f"{r['point']}: bandwidth_gbps {r['bandwidth_gbps']} != bytes / time")
        if r["kernel"] == "fma_chain" and not close(float(r["tflops"]), float(r["flops"]) / t / 1e6):
            fail(f"{r['point']}: tflops {r['tflops']} != flops / time")
        if r["fraction_of_copy"] and not close(float(r["fraction_of_copy"]),
                                               float(r["bandwidth_gbps"]) / float(r["copy_gbps"])):
            fail(f"{r['point']}: fraction_of_copy {r['fraction_of_copy']} != bandwidth / copy_gbps")
        if r["kernel"] != "fma_chain" and not r["copy_reference"]:
            fail(f"{r['point']}: copy_reference empty (a reference or the reason there is none)")
    ok_kernels = {r["kernel"] for r in rows if r["status"] == "ok"}
    if a.every_kernel and ok_kernels != set(KERNELS):
        fail(f"kernels without an ok row: {sorted(set(KERNELS) - ok_kernels)}")
    for want in (a.ok_for.split(",") if a.ok_for else []):
        impl, kernel = want.split(":")
        if not any(r["impl"] == impl and r["kernel"] == kernel and r["status"] == "ok" and r["verified"] == "ok"
                   for r in rows):
            fail(f"no ok, verified {impl} row for {kernel}")
    if a.fraction_of_copy and not any(r["fraction_of_copy"] for r in rows if r["family"] == "op"):
        fail("no op row carries fraction_of_copy")
    print("OK: memory checks")


if __name__ == "__main__":
    main()
