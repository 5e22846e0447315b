"""Shared by the PyTorch baselines of .ci/gpu-check (tests/gpu/torch_<bench>.py): the CSV
they write, device-event timing in gpucal's regimes, and reading the gpucal rows whose
shapes they repeat. Every torch_<bench>.py takes `--out FILE.csv [--quick]` and writes rows
with at least TORCH_COLUMNS, where `point` is the gpucal CSV `point` of the measurement it
is compared with, so tests/gpu/ratios.py joins the two on (bench, point).

Every gpucal row a script reads gets exactly one torch row: measured, or `skipped` with the
reason in `detail` (an op PyTorch lacks, a different semantics, `time budget spent`), so the
ratio table can count what was not compared. Rows that share one measurement (a heuristic
and an autotuned GEMM of one shape) are one Job; jobs run in an order chosen so that a run
cut by --time-budget loses a uniform tail (interleave()).

torch itself is imported by the callers, inside main(), so that --help and the pure helpers
here work on a machine without it (CI).
"""
import argparse
import collections
import csv
import json
import math
import os
import sys
import time

TORCH_COLUMNS = ["bench", "point", "torch_op", "status", "detail", "time_us_median", "time_us_p10", "time_us_p90",
                 "samples"]


def percentile(sorted_values, q):
    """Linear interpolation between closest ranks (q in [0, 1]) of an ascending list."""
    if not sorted_values:
        return float("nan")
    pos = q * (len(sorted_values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(times_us):
    s = sorted(times_us)
    return {"time_us_median": percentile(s, 0.5), "time_us_p10": percentile(s, 0.1),
            "time_us_p90": percentile(s, 0.9), "samples": len(s)}


def ok_rows(paths, bench):
    """The ok rows of gpucal CSVs for one bench (missing files are skipped: a step that ran
    out of its time budget may not have written one)."""
    rows = []
    for path in paths:
        if not os.path.exists(path):
            print(f"note: {path} not found; its points get no baseline")
            continue
        with open(path, newline="") as f:
            rows += [r for r in csv.DictReader(f) if r.get("status") == "ok" and r.get("bench") == bench]
    return rows


class RowWriter:
    """CSV rows written and flushed one at a time (a run stopped by its budget keeps them)."""

    def __init__(self, path, extra_columns=()):
        self.columns = TORCH_COLUMNS + [c for c in extra_columns if c not in TORCH_COLUMNS]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.file = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.file, fieldnames=self.columns, extrasaction="ignore")
        self.writer.writeheader()
        self.file.flush()
        self.rows = 0

    def write(self, row):
        self.writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
        self.file.flush()
        self.rows += 1

    def close(self):
        self.file.close()


class Budget:
    """Wall-clock budget of a baseline run: points past it are not measured. Start it before
    `import torch` so that the import and the CUDA start count against it."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds if seconds and seconds > 0 else None

    def expired(self):
        return self.end is not None and time.monotonic() > self.end


BUDGET_SPENT = "time budget spent"

# One measurement and the gpucal rows it answers. result: None (measure `key`), or the
# row's outcome known without measuring (a skip with its reason), written whatever the budget.
Job = collections.namedtuple("Job", "key rows result")


def unique_points(rows):
    """The rows with distinct `point`s, the first of each kept: a shape listed twice in a
    shapes file is one gpucal point (bench_gemm writes it twice under one key) and gets one
    torch row, so the ratio table does not count it twice."""
    seen, out = set(), []
    for r in rows:
        if r["point"] not in seen:
            seen.add(r["point"])
            out.append(r)
    return out


def group_jobs(rows, key_of):
    """Jobs in order of first appearance. key_of(row) gives (key, result): rows with no
    result and the same key share one measurement; a row whose result is known is a job of
    its own."""
    jobs, shared = [], {}
    for r in rows:
        key, result = key_of(r)
        if result is not None:
            jobs.append(Job(key, [r], result))
        elif key in shared:
            shared[key].rows.append(r)
        else:
            shared[key] = Job(key, [r], None)
            jobs.append(shared[key])
    return jobs


def interleave(items, group_of):
    """Round-robin over the groups of `items` (group_of(item)), groups in order of first
    appearance, each group's items in their own order: a run cut short loses the tail of
    every group alike instead of whole groups (the last dtype, the last kernels)."""
    groups = {}
    for it in items:
        groups.setdefault(group_of(it), []).append(it)
    lists = list(groups.values())
    return [lst[i] for i in range(max(map(len, lists), default=0)) for lst in lists if i < len(lst)]


def run_jobs(jobs, measure, write, budget, log=print):
    """Measures each job whose result is not known (measure(key) -> result dict) while the
    budget lasts, then marks the rest skipped `time budget spent`; write(row, result) is
    called exactly once for every row of every job, in job order. Returns (jobs measured,
    rows skipped for the budget)."""
    measured = spent = 0
    for job in jobs:
        result = job.result
        if result is None:
            if budget.expired():
                if not spent:
                    log(f"{BUDGET_SPENT}: {job.rows[0]['point']} and later points not measured")
                result = {"status": "skipped", "detail": BUDGET_SPENT}
                spent += len(job.rows)
            else:
                result = measure(job.key)
                measured += 1
        for r in job.rows:
            write(r, result)
    return measured, spent


def seconds(text):
    """argparse type: a finite number of seconds >= 0."""
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got '{text}'")
    return v


def base_args(description, out_required=True):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", required=out_required, help="torch baseline CSV to write")
    ap.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    ap.add_argument("--points-from", nargs="+", default=[],
                    help="gpucal CSVs whose ok rows give the shapes and the point keys to measure")
    ap.add_argument("--time-budget", type=seconds, default=0,
                    help="seconds from the start; points past it are written skipped 'time budget spent' (0: none)")
    ap.add_argument("--max-time-per-point", type=seconds, default=None, metavar="S",
                    help="seconds of sampling per point at most (extended to the minimum samples; "
                         "default 0.25, --quick 0.05)")
    return ap


def import_torch_or_skip():
    """torch for a CPU test, or exit 77 (ctest: skipped) where this Python has none."""
    try:
        import torch  # noqa: PLC0415
    except ImportError as e:
        print(f"SKIP: no torch in this Python ({sys.executable}: {e})")
        sys.exit(77)
    return torch


def torch_facts(torch):
    """What the sidecar says about the PyTorch side."""
    facts = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": sys.version.split()[0]}
    try:
        facts["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:  # noqa: BLE001 (a fact we could not read is said, not fatal)
        facts["cudnn"] = f"unavailable: {e}"
    try:
        facts["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    except Exception as e:  # noqa: BLE001
        facts["nccl"] = f"unavailable: {e}"
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        facts["device"] = {"name": p.name, "capability": f"{p.major}.{p.minor}", "sms": p.multi_processor_count,
                           "memory_bytes": p.total_memory, "l2_bytes": getattr(p, "L2_cache_size", None)}
    for flag in ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        try:
            facts[f"matmul_{flag}"] = getattr(torch.backends.cuda.matmul, flag)
        except (AttributeError, AssertionError):  # older torch raises AssertionError for unknown flags
            facts[f"matmul_{flag}"] = None
    return facts


def write_sidecar(csv_path, bench, torch, extra=None):
    doc = {"bench": bench, "kind": "torch baseline", "script": os.path.basename(sys.argv[0]),
           "command_line": sys.argv, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "torch": torch_facts(torch)}
    doc.update(extra or {})
    with open(csv_path[:-4] + ".json", "w") as f:
        json.dump(doc, f, indent=2)


class Timer:
    """Device-event timing the way gpucal times: warm-up launches, then samples of `batch`
    back-to-back launches (hot) or of one launch after a last-level-cache flush (cold),
    until max_time_s has passed and min_samples were taken (max_time_s None: 0.25 s, 0.05 s
    quick; base_args' --max-time-per-point)."""

    def __init__(self, torch, quick=False, device="cuda", max_time_s=None):
        self.torch = torch
        self.min_samples = 5 if quick else 10
        self.max_time_s = max_time_s if max_time_s is not None else 0.05 if quick else 0.25
        self.warmup = 2 if quick else 3
        self.device = device
        self.flush_value = 0
        if device == "cuda":
            props = torch.cuda.get_device_properties(0)
            l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
            self.flush_buffer = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")

    def flush(self):
        self.flush_value = (self.flush_value + 1) % 256
        self.flush_buffer.fill_(self.flush_value)

    def measure(self, fn, regime="hot"):
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        if self.device != "cuda":  # the plumbing smoke run: the host clock
            times, t0 = [], time.monotonic()
            while len(times) < self.min_samples:
                t = time.perf_counter()
                fn()
                times.append((time.perf_counter() - t) * 1e6)
            return summarize(times)
        torch.cuda.synchronize()
        cold = regime.startswith("cold")
        batch = 1
        if not cold:  # enough launches per sample that event resolution (~us) does not matter
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            one_us = max(start.elapsed_time(end) * 1e3, 1e-3)
            batch = max(1, min(1000, int(200.0 / one_us)))
        times, t0 = [], time.monotonic()
        while len(times) < self.min_samples or time.monotonic() - t0 < self.max_time_s:
            if cold:
                self.flush()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(batch):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3 / batch)
            if len(times) >= 10000:
                break
        return summarize(times)
