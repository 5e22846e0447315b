#!/usr/bin/env python3
"""Google Benchmark's flags behave as their users expect (core/driver/gbench_flags.h), checked
on a real bench: listing writes nothing, --benchmark_out never loses a file to --out,
repetitions are distinct rows that `gpucal compare` aggregates, --benchmark_min_time maps
to the minimum sampling time in both spellings, a run that would measure nothing is refused
before any file is touched.

usage: check_gbench_flags.py CASE OUTDIR BENCH [GPUCAL]   (CASE: list, out, repetitions, min-time, nothing)
"""
import csv
import json
import os
import shutil
import subprocess
import sys

FAST = ["--backend", "host", "--dtype", "fp32", "--k", "64", "--n", "64", "--warmup-time", "0", "--quiet"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(cmd, expect_rc=0):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != expect_rc:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect_rc}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def case_list(out, bench):
    files = {os.path.join(out, n): f"sentinel {n}\n" for n in ("l.csv", "l.json", "l.samples.csv", "gb.json")}
    for path, text in files.items():
        open(path, "w").write(text)
    for flag in ("--benchmark_list_tests", "--benchmark_list_tests=true"):
        p = run([bench, *FAST, "--m", "64,128", flag, "--out", os.path.join(out, "l.csv"),
                 "--benchmark_out=" + os.path.join(out, "gb.json")])
        names = [l for l in p.stdout.splitlines() if l.startswith("gemm/")]
        if len(names) != 2:
            fail(f"{flag}: expected the 2 point names on stdout, got {p.stdout!r}")
        for path, text in files.items():
            if open(path).read() != text:
                fail(f"{flag}: listing changed {path}")
    # Listing off: the same command measures and writes.
    run([bench, *FAST, "--m", "64", "--benchmark_list_tests=false", "--max-time-per-point", "0.02",
         "--out", os.path.join(out, "l.csv")])
    if len(rows(os.path.join(out, "l.csv"))) != 1:
        fail("--benchmark_list_tests=false did not run the point")


def case_out(out, bench):
    csv_path, sidecar = os.path.join(out, "o.csv"), os.path.join(out, "o.json")
    for p in (csv_path, sidecar):
        if os.path.exists(p):
            os.remove(p)
    open(sidecar, "w").write("sentinel\n")
    for clash in (sidecar, csv_path, os.path.join(out, "o.samples.csv")):
        p = run([bench, *FAST, "--m", "64", "--out", csv_path, "--benchmark_out=" + clash], expect_rc=2)
        ours = [l for l in p.stderr.splitlines() if l.startswith("bench_")]
        if len(ours) != 1 or "give Google Benchmark's output another name" not in ours[0]:
            fail(f"clash with {clash}: expected one error line, got {ours}")
        if open(sidecar).read() != "sentinel\n" or os.path.exists(csv_path):
            fail(f"clash with {clash}: a file was written before the refusal")
    gb = os.path.join(out, "o.gbench.json")
    run([bench, *FAST, "--m", "64", "--max-time-per-point", "0.02", "--out", csv_path, "--benchmark_out=" + gb,
         "--benchmark_out_format=json"])
    if "benchmarks" not in json.load(open(gb)):
        fail("Google Benchmark's JSON lost")
    if "metadata_schema_version" not in json.load(open(sidecar)):
        fail("sidecar not written")


def case_repetitions(out, bench, gpucal):
    results = os.path.join(out, "reps")
    shutil.rmtree(results, ignore_errors=True)
    os.makedirs(results)
    csv_path = os.path.join(results, "gemm.csv")
    run([bench, *FAST, "--m", "64", "--max-time-per-point", "0.02", "--benchmark_repetitions=3", "--out", csv_path])
    rs = rows(csv_path)
    if len(rs) != 3 or len({r["point"] for r in rs}) != 1 or [r["repetition"] for r in rs] != ["0", "1", "2"]:
        fail(f"expected 3 rows of one point with repetition 0,1,2: {[(r['point'], r['repetition']) for r in rs]}")
    per_rep = {}
    for s in rows(os.path.join(results, "gemm.samples.csv")):
        per_rep[s["repetition"]] = per_rep.get(s["repetition"], 0) + 1
    for r in rs:
        if per_rep.get(r["repetition"]) != int(r["samples"]):
            fail(f"repetition {r['repetition']}: samples file has {per_rep.get(r['repetition'])}, row {r['samples']}")
    p = run([gpucal, "compare", results, results, "--json", os.path.join(out, "reps_cmp.json")])
    points = json.load(open(os.path.join(out, "reps_cmp.json")))["points"]
    # A repetition preempted on a busy machine makes the point suspect: named so, never judged.
    expected = "suspect" if any(r.get("suspect") for r in rs) else "unchanged"
    if len(points) != 1 or points[0]["verdict"] != expected:
        fail(f"compare should aggregate the repetitions into one {expected} point: {points}\n{p.stdout}")


def case_min_time(out, bench):
    for flag in ("--benchmark_min_time=0.2", "--benchmark_min_time=0.2s"):
        csv_path = os.path.join(out, "mt.csv")
        run([bench, *FAST, "--m", "64", "--regime", "hot", "--noise-target", "1", "--max-time-per-point", "0.02",
             flag, "--out", csv_path])
        r = rows(csv_path)[0]
        if float(r["sampling_time_s"]) < 0.2:
            fail(f"{flag}: sampled {r['sampling_time_s']} s")
        if json.load(open(os.path.join(out, "mt.json")))["measurement"]["min_time_per_point_s"] != 0.2:
            fail(f"{flag}: sidecar lacks min_time_per_point_s 0.2")
    run([bench, *FAST, "--m", "64", "--noise-target", "1", "--benchmark_min_time=40x", "--out", csv_path])
    if int(rows(csv_path)[0]["samples"]) < 40:
        fail("--benchmark_min_time=40x: fewer than 40 samples")
    p = run([bench, *FAST, "--m", "64", "--benchmark_min_time=fast"], expect_rc=2)
    ours = [l for l in p.stderr.splitlines() if l.strip()]
    if len(ours) != 1 or "--benchmark_min_time" not in ours[0]:
        fail(f"malformed --benchmark_min_time: expected one line, got {ours}")


def case_nothing(out, bench):
    """A run that would measure nothing, or a value Google Benchmark would answer with its
    usage text and exit 0 (or a crash), is one line and exit 2, before --out's files are
    touched: an earlier run's rows are never lost."""
    csv_path = os.path.join(out, "v.csv")
    run([bench, *FAST, "--m", "32", "--max-time-per-point", "0.02", "--out", csv_path])
    files = [csv_path, os.path.join(out, "v.samples.csv"), os.path.join(out, "v.json")]
    before = {p: open(p).read() for p in files}
    if len(rows(csv_path)) != 1:
        fail("the first run wrote no row")
    cases = [
        (["--benchmark_filter=zzz"], {}, "matches none of the 1 point"),
        ([], {"BENCHMARK_FILTER": "zzz"}, "BENCHMARK_FILTER=zzz (environment) matches none"),
        (["--benchmark_repetitions=0"], {}, "would measure no point"),
        ([], {"BENCHMARK_REPETITIONS": "0"}, "BENCHMARK_REPETITIONS=0 (environment) would measure no point"),
        (["--benchmark_repetitions=-1"], {}, "expected a count of repetitions"),
        (["--benchmark_repetitions=two"], {}, "expected a count of repetitions"),
        (["--benchmark_format=xml"], {}, "--benchmark_format=xml: expected console|json|csv"),
        ([], {"BENCHMARK_FORMAT": "xml"}, "BENCHMARK_FORMAT=xml (environment): expected"),
        (["--benchmark_out_format=xml"], {}, "--benchmark_out_format=xml: expected json|console|csv"),
        (["--benchmark_time_unit=min"], {}, "--benchmark_time_unit=min: expected ns|us|ms|s"),
        (["--benchmark_color="], {}, "--benchmark_color=: expected auto, true or false"),
    ]
    for flags, env, want in cases:
        p = subprocess.run([bench, *FAST, "--m", "32", "--out", csv_path, *flags], capture_output=True, text=True,
                           timeout=300, env={**os.environ, **env})
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        what = " ".join(flags) + " " + " ".join(f"{k}={v}" for k, v in env.items())
        if p.returncode != 2 or len(lines) != 1 or want not in lines[0] or p.stdout.strip():
            fail(f"{what}: expected exit 2 and one line with {want!r}; got exit {p.returncode}, stderr {lines}, "
                 f"stdout {p.stdout[-500:]!r}")
        for path, text in before.items():
            if open(path).read() != text:
                fail(f"{what}: {path} changed")
    # The command line overrides the environment, both ways.
    p = subprocess.run([bench, *FAST, "--m", "32", "--max-time-per-point", "0.02", "--out", csv_path,
                        "--benchmark_repetitions=2"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "BENCHMARK_REPETITIONS": "0", "BENCHMARK_FORMAT": "xml"})
    if p.returncode != 2 or "BENCHMARK_FORMAT" not in p.stderr:
        fail(f"BENCHMARK_FORMAT=xml under --benchmark_repetitions=2: exit {p.returncode} {p.stderr!r}")
    run([bench, *FAST, "--m", "32", "--max-time-per-point", "0.02", "--out", csv_path, "--benchmark_repetitions=2",
         "--benchmark_format=json", "--benchmark_time_unit=ms"])
    if len(rows(csv_path)) != 2:
        fail("--benchmark_repetitions=2 over BENCHMARK_REPETITIONS=0 did not write 2 rows")


def main():
    case, out, bench = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(out, exist_ok=True)
    if case == "list":
        case_list(out, bench)
    elif case == "out":
        case_out(out, bench)
    elif case == "repetitions":
        case_repetitions(out, bench, sys.argv[4])
    elif case == "nothing":
        case_nothing(out, bench)
    elif case == "min-time":
        case_min_time(out, bench)
    else:
        fail("unknown case " + case)
    print("OK: " + case)


if __name__ == "__main__":
    main()
