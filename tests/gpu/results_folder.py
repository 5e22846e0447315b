"""Reading a results folder of .ci/gpu-check: gpucal CSVs (any *.csv with gpucal's columns)
and PyTorch baselines torch_<bench>.csv, in the folder and in each of its subfolders (part 3
writes step/, the harness checks harness/). Shared by ratios.py (the per-point join) and
ratio_targets.py (the reference targets). Standard library only.
"""
import csv
import glob
import math
import os

GPUCAL_COLUMNS = {"schema_version", "bench", "point", "status", "time_us_median"}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def is_gpucal_csv(path):
    name = os.path.basename(path)
    if name.startswith("torch_") or name.endswith((".samples.csv", ".best.csv")) or name.startswith("ratios"):
        return False
    with open(path, newline="") as f:
        header = next(csv.reader(f), [])
    return GPUCAL_COLUMNS <= set(header)


def number(text):
    """The float in text, or None (empty, not a number, inf or nan)."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def folders(results_dir):
    """The results folder and its subfolders, each joined on its own."""
    subs = sorted(p for p in glob.glob(os.path.join(results_dir, "*")) if os.path.isdir(p))
    return [results_dir] + subs


def gpucal_rows(folder):
    """Every row (any status) of the folder's gpucal CSVs, each with `_file` (its CSV's name)."""
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        if is_gpucal_csv(path):
            rows += [dict(r, _file=os.path.basename(path)) for r in read_csv(path)]
    return rows


def torch_rows(folder):
    """Every row (any status) of the folder's torch_*.csv."""
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "torch_*.csv"))):
        rows += read_csv(path)
    return rows


def is_ok(row):
    """A measured row: status ok (a torch row without a status column counts) with a time."""
    return row.get("status", "ok") == "ok" and bool(number(row.get("time_us_median")))
