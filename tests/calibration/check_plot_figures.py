#!/usr/bin/env python3
"""Reads the figures of plots/plot_results.py as a person would, from the Figure objects.

Usage: check_plot_figures.py PLOTS_DIR RESULTS_DIR [RESULTS_DIR...]

For every figure of each results folder: each axis has a label with a unit in parentheses; each
legend's entries differ in colour, marker or line style. The memory-bandwidth y axis has at least
3 labelled ticks in view; the roofline's legend lies off the axes' data area; the memory-ops
figure's legend entries differ in colour and marker and its title says what the points above the
memory line are; no p2p pair matrix has one measured cell. Exits 1 naming each failure.
"""
import math
import re
import sys

sys.path.insert(0, sys.argv[1])
import plot_results  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

failures = []
UNIT = re.compile(r"\(.*\S.*\)")


def check(cond, what):
    if not cond:
        failures.append(what)


def is_colorbar(ax):
    return hasattr(ax, "_colorbar")


def labelled_ticks(ax, axis):
    """Tick labels with text whose position lies in the axis' view."""
    lo, hi = sorted(ax.get_ylim() if axis == "y" else ax.get_xlim())
    getter = ax.yaxis if axis == "y" else ax.xaxis
    ticks = getter.get_ticklabels(which="both")
    at = [t.get_position()[1 if axis == "y" else 0] for t in ticks]
    return [t.get_text() for t, v in zip(ticks, at) if t.get_text().strip() and lo <= v <= hi]


def legend_entries(legend):
    handles = getattr(legend, "legend_handles", None) or getattr(legend, "legendHandles", [])
    entries = []
    for h in handles:
        color = h.get_color() if hasattr(h, "get_color") else h.get_facecolor()
        if not isinstance(color, str) and len(color) and not isinstance(color[0], float):
            color = color[0]
        marker = h.get_marker() if hasattr(h, "get_marker") else "patch"
        # The dash pattern as drawn: get_linestyle() reads '--' for every custom dash sequence.
        style = getattr(h, "_unscaled_dash_pattern", None) or (h.get_linestyle() if hasattr(h, "get_linestyle") else "-")
        if hasattr(h, "get_linestyle") and h.get_linestyle() in ("None", "none", " ", ""):
            style = "None"
        entries.append((to_hex(color), "None" if marker in (None, "", " ", "none") else marker, str(style)))
    return entries


def check_axes(name, fig):
    for ax in fig.axes:
        if is_colorbar(ax):
            label = ax.get_ylabel() or ax.get_xlabel()
            check(UNIT.search(label), "%s: colour bar label %r has no unit" % (name, label))
            continue
        for axis, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
            check(UNIT.search(label), "%s: %s label %r has no unit in parentheses" % (name, axis, label))
        legend = ax.get_legend()
        if legend is not None:
            entries = legend_entries(legend)
            check(len(set(entries)) == len(entries), "%s: legend entries share colour, marker and style: %s" % (name, entries))


def check_figure(name, fig):
    fig.canvas.draw()
    check_axes(name, fig)
    ax = fig.axes[0]
    if name == "memory_bandwidth":
        ticks = labelled_ticks(ax, "y")
        check(len(ticks) >= 3, "memory_bandwidth: %d labelled y ticks %s, expected at least 3" % (len(ticks), ticks))
    if name.startswith("gemm_roofline"):
        legend = ax.get_legend()
        check(legend is not None and not legend.get_window_extent().overlaps(ax.get_window_extent()),
              "%s: the legend overlaps the axes' data area" % name)
    if name == "memory_ops":
        pairs = [(c, m) for c, m, _ in legend_entries(ax.get_legend())]
        check(len(set(pairs)) == len(pairs), "memory_ops: legend entries share colour and marker: %s" % pairs)
        check("above the memory line" in ax.get_title() or "cache" in ax.get_title(),
              "memory_ops: the title does not say what the points above the memory line are: %r" % ax.get_title())
    if name.startswith("p2p_pair_matrix"):
        cells = [v for row in ax.images[0].get_array().tolist() for v in row if v is not None and not math.isnan(v)]
        check(len(cells) >= 2, "%s: a pair matrix of %d cell(s)" % (name, len(cells)))


def main():
    for results in sys.argv[2:]:
        names = []
        for name, fig in plot_results.figures(results):
            names.append(name)
            before = len(failures)
            check_figure(name, fig)
            failures[before:] = ["%s: %s" % (results, f) for f in failures[before:]]
            plot_results.plt.close(fig)
        check(names, "%s: no figure" % results)
        print("%s: %d figure(s) read: %s" % (results, len(names), ", ".join(names)))
    for f in failures:
        print("FAIL:", f)
    print("%s: %d failure(s)" % ("FAILED" if failures else "ok", len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
