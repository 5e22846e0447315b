"""Shared by the PyTorch baselines of .ci/gpu-check (tests/gpu/torch_<bench>.py): the CSV
they write, device-event timing in gpucal's regimes, and reading the gpucal rows whose
shapes they repeat. Every torch_<bench>.py takes `--out FILE.csv [--quick]` and writes rows
with at least TORCH_COLUMNS, where `point` is the gpucal CSV `point` of the measurement it
is compared with, so tests/gpu/ratios.py joins the two on (bench, point).

torch itself is imported by the callers, inside main(), so that --help and the pure helpers
here work on a machine without it (CI).
"""
import argparse
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
    """Wall-clock budget of a baseline run: points past it are not measured."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds if seconds and seconds > 0 else None

    def expired(self):
        return self.end is not None and time.monotonic() > self.end


def base_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", required=True, help="torch baseline CSV to write")
    ap.add_argument("--quick", action="store_true", help="fewer samples (a smoke run)")
    ap.add_argument("--points-from", nargs="+", default=[],
                    help="gpucal CSVs whose ok rows give the shapes and the point keys to measure")
    ap.add_argument("--time-budget", type=float, default=0, help="seconds; points past it are left out (0: none)")
    return ap


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
    until max_time_s has passed and min_samples were taken."""

    def __init__(self, torch, quick=False, device="cuda"):
        self.torch = torch
        self.min_samples = 5 if quick else 10
        self.max_time_s = 0.05 if quick else 0.25
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
