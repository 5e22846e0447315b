"""Shared helpers of the gpucal plot scripts: reading result CSVs, saving figures.

Standard library + matplotlib only (Agg backend, no display). Units follow results/SCHEMA.md:
GB/s = 1e9 B/s, TFLOP/s = 1e12 flop/s, sizes in bytes, times in microseconds.
"""
import csv
import json
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the backend)
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402


def read_rows(results_dir, bench):
    """ok rows of RESULTS_DIR/<bench>.csv as dicts, or None when the file is absent."""
    path = os.path.join(results_dir, bench + ".csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return [row for row in csv.DictReader(f) if row.get("status") == "ok"]


def read_all_rows(results_dir, bench):
    path = os.path.join(results_dir, bench + ".csv")
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_calibration(results_dir):
    path = os.path.join(results_dir, "calibration.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def num(row, column):
    """The column as float; None when empty or absent."""
    value = row.get(column, "")
    return float(value) if value not in ("", None) else None


def regimes(rows):
    return ", ".join(sorted({r.get("regime", "?") for r in rows})) or "?"


def skip(name, reason):
    print("skip %s: %s" % (name, reason))


def save(fig, out_dir, name):
    """Writes NAME.png and NAME.svg; returns the PNG path."""
    os.makedirs(out_dir, exist_ok=True)
    fig.tight_layout()
    paths = []
    for ext in ("png", "svg"):
        path = os.path.join(out_dir, "%s.%s" % (name, ext))
        fig.savefig(path, dpi=120)
        paths.append(path)
    plt.close(fig)
    print("wrote %s (+ .svg)" % paths[0])
    return paths[0]


def safe_name(text):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(text))


def annotated_heatmap(ax, grid, xlabels, ylabels, fmt, text_color, **imshow_args):
    """grid[i][j] as an image with each finite value written in its cell; returns the image."""
    image = ax.imshow(grid, **imshow_args)
    for i in range(len(ylabels)):
        for j in range(len(xlabels)):
            if not math.isnan(grid[i][j]):
                ax.text(j, i, fmt % grid[i][j], ha="center", va="center", color=text_color, fontsize=8)
    ax.set_xticks(range(len(xlabels)), [str(x) for x in xlabels])
    ax.set_yticks(range(len(ylabels)), [str(y) for y in ylabels])
    return image


def approx_bytes(n):
    """Rounded binary-suffixed size for prose: 262912 -> '257 KiB', 1835008 -> '1.75 MiB'."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return "%.3g %s" % (n, unit)
        n /= 1024
    return "%.3g TiB" % n


def format_bytes(n):
    """Exact binary-suffixed size for labels: 512 -> '512 B', 524288 -> '512 KiB'."""
    n = int(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or n % 1024:
            return "%d %s" % (n, unit)
        n //= 1024
    return "%d TiB" % n


def label_log_axis(ax, which="y"):
    """Plain-number labels on a log10 axis, at least 3 in view: every decade over 3+ decades,
    1-2-5 steps over 1 to 3, every integer step within one. Call after the data is plotted."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    lo, hi = ax.get_ylim() if which == "y" else ax.get_xlim()
    decades = math.log10(hi / lo) if lo > 0 and hi > lo else 0
    subs = (1.0,) if decades > 3 else (1.0, 2.0, 5.0) if decades > 1 else tuple(float(i) for i in range(1, 10))
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    axis.set_minor_formatter(NullFormatter())


def label_bytes_axis(ax, which="x"):
    """A log2 byte axis labelled '32 KiB', '4 MiB' instead of 2^15, 2^22."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v) if v >= 1 and float(v).is_integer() else "%g" % v))


def legend_outside(ax, fontsize=7, ncol=1):
    """The legend right of the axes, off the data; save()'s tight_layout makes room for it."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize=fontsize, ncol=ncol)
