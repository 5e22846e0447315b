#!/usr/bin/env python3
"""`gpucal export --to xla` round trip on XLA's published H100 tables (tests/fixtures/xla_tables):
import both tables, fit, export --to xla, import the export. The re-imported rows must be the
first import's: every GEMM row (same point, TFLOP/s equal to the 7 significant digits gpucal's CSVs
keep) and every collective row within XLA's lookup range (1 KiB to 1 GiB; same point, same time).
The exported files must encode with protoc against app/import/xla_perf_table.proto (XLA's message
names, field names and numbers), and the export's notes must say every figure was measured.
Checked against XLA's own .proto files as well: docs/verified.md ("gpucal export --to xla").

Usage: xla_round_trip.py GPUCAL FIXTURE_DIR WORK_DIR PROTO_FILE [PROTOC]
Exit 0 when the round trip holds, 1 with one line per difference.
"""
import csv
import os
import shutil
import subprocess
import sys


def run(cmd, stdin=None):
    done = subprocess.run(cmd, capture_output=True, text=stdin is None, stdin=stdin)
    if done.returncode != 0:
        sys.exit("FAILED: " + " ".join(cmd) + "\n" + str(done.stdout) + str(done.stderr))
    return done.stdout


def rows(path, key="point"):
    with open(path, newline="") as f:
        return {r[key]: r for r in csv.DictReader(f)}


def close(a, b, rel):
    return abs(float(a) - float(b)) <= rel * max(abs(float(a)), abs(float(b)))


def main():
    gpucal, fixtures, work, proto = sys.argv[1:5]
    protoc = sys.argv[5] if len(sys.argv) > 5 else shutil.which("protoc")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    first, exported, second = (os.path.join(work, d) for d in ("first", "export", "second"))
    run([gpucal, "import", os.path.join(fixtures, "xla_matmul_sm90.txtpb"),
         os.path.join(fixtures, "xla_collective_sm90.txtpb"), "--device", "NVIDIA H100 80GB HBM3", "--out", first])
    run([gpucal, "fit", first])
    out = run([gpucal, "export", first, "--to", "xla", "--out", exported, "--verbose"])
    xla = os.path.join(exported, "xla")
    tables = {"matmul_perf_table.txtpb": "xla.GemmPerfTable",
              "collective_perf_table.txtpb": "xla.DeviceHloInstructionProfiles"}
    problems = []
    if "0 from the GEMM surface" not in out or "0 from the communication models" not in out:
        problems.append("the export modelled figures of a complete table:\n" + out)
    run([gpucal, "import"] + [os.path.join(xla, t) for t in tables] + ["--out", second])
    if protoc:
        for table, message in tables.items():
            with open(os.path.join(xla, table), "rb") as f:
                encoded = run([protoc, "-I", os.path.dirname(proto), "--encode=" + message, proto], stdin=f)
            if not encoded:
                problems.append(f"{table}: protoc encoded nothing")
    gemm_a, gemm_b = rows(os.path.join(first, "gemm.csv")), rows(os.path.join(second, "gemm.csv"))
    if set(gemm_a) != set(gemm_b):
        problems.append(f"gemm points differ: {sorted(set(gemm_a) ^ set(gemm_b))[:5]}")
    for point in set(gemm_a) & set(gemm_b):
        if not close(gemm_a[point]["tflops"], gemm_b[point]["tflops"], 1e-6):
            problems.append(f"gemm {point}: {gemm_a[point]['tflops']} then {gemm_b[point]['tflops']} TFLOP/s")
    coll_a = {p: r for p, r in rows(os.path.join(first, "collectives.csv")).items()
              if 1024 <= float(r["size_bytes"]) <= 1 << 30}
    coll_b = rows(os.path.join(second, "collectives.csv"))
    if set(coll_a) != set(coll_b):
        problems.append(f"collective points differ: {sorted(set(coll_a) ^ set(coll_b))[:5]}")
    for point in set(coll_a) & set(coll_b):
        if not close(coll_a[point]["time_us_median"], coll_b[point]["time_us_median"], 1e-6):
            problems.append(f"{point}: {coll_a[point]['time_us_median']} then {coll_b[point]['time_us_median']} us")
    for p in problems[:20]:
        print("ROUND TRIP:", p)
    print(f"{len(gemm_a)} gemm rows, {len(coll_a)} collective rows: "
          f"{'the same after export --to xla and import' if not problems else str(len(problems)) + ' difference(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
