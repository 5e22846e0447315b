#!/usr/bin/env python3
"""Figures from one gpucal results folder.

    plot_results.py RESULTS_DIR [-o OUT_DIR]      (default OUT_DIR: RESULTS_DIR/plots)

Writes PNG and SVG for:
  collectives_bandwidth_<collective>   bus bandwidth against message size per rank count, with the
                                       fits of calibration.json (alpha-beta, sigmoid, piecewise,
                                       regime, table; the group's best form drawn thick)
  gemm_efficiency_heatmap_<dtype>_k<K> efficiency (tflops / peak_tflops) over M x N for a fixed K
  gemm_roofline_<dtype>                achieved TFLOP/s against arithmetic intensity, with the roofs
  attention_tflops                     attention TFLOP/s against sequence length
  p2p_pair_matrix_<pattern>            p2p bandwidth per (source, destination) rank; with one
                                       measured pair, p2p_pair_bandwidth_<pattern> instead: that
                                       pair's bandwidth against message size (a 1-cell matrix says nothing)
  memory_bandwidth                     STREAM bandwidth against working set per kernel and dtype, the
                                       cache levels of memory.json marked, calibration.json's plateaus shaded
  memory_ops                           each memory-bound op's bandwidth against bytes moved (colour:
                                       op family, marker: fwd/bwd), the device's memory bandwidth
                                       (or STREAM past the last cache level) and the cache levels
A figure whose input rows are absent is skipped with a printed reason. Needs matplotlib; run
with /usr/bin/python3 on Debian (the system Python has python3-matplotlib).

As a module: figures(results_dir) yields (name, Figure) of each figure, laid out as saved (the
plot tests read the axes, ticks and legends from them).
"""
import argparse
import collections
import json
import math
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpucal_plot_common import (annotated_heatmap, approx_bytes, format_bytes, label_bytes_axis, label_log_axis, legend_outside, num,  # noqa: E402
                                plt, read_calibration, read_rows, regimes, safe_name, save, skip)
from matplotlib.ticker import FuncFormatter  # noqa: E402


def plot_collectives(results_dir, calibration):
    rows = read_rows(results_dir, "collectives")
    if not rows:
        return skip("collectives_bandwidth", "no ok rows in collectives.csv")
    fits = {}
    if calibration:
        for g in calibration["communication"]["collectives"]:
            fits[(g["collective"], g["dtype"], int(g["nranks"]), int(g["nnodes"]))] = g
    else:
        print("note: no calibration.json in %s: points only (run `gpucal fit` first for the fitted curves)" % results_dir)
    by_collective = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rows:
        # An import whose log names no hosts leaves nnodes empty (0, as its calibration group has it).
        key = (r["dtype"], int(r["nranks"]), int(r["nnodes"] or 0))
        by_collective[r["collective"]][key].append(r)
    styles = {"alpha_beta": "-", "sigmoid": "--", "piecewise": ":", "regime": "-.", "table": (0, (1, 1))}
    for collective, groups in sorted(by_collective.items()):
        fig, ax = plt.subplots(figsize=(10.5, 5))
        for i, (key, group_rows) in enumerate(sorted(groups.items())):
            dtype, nranks, nnodes = key
            color = "C%d" % (i % 10)
            pts = sorted((num(r, "size_bytes"), num(r, "busbw_gbps")) for r in group_rows)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", color=color,
                    label="%s n=%d nodes=%s (measured)" % (dtype, nranks, nnodes or "?"))
            fit = fits.get((collective, dtype, nranks, nnodes))
            if fit and "model_curves" in fit:
                curves = fit["model_curves"]
                best = (fit.get("best") or {}).get("form")
                for form, style in styles.items():
                    values = curves.get(form + "_busbw_gbps")
                    if values:
                        mape = fit[form].get("heldout", {}).get("mape_pct")
                        label = "%s fit" % form + (" (held-out MAPE %.1f%%)" % mape if mape is not None else "")
                        label += " [best]" if form == best else ""
                        ax.plot(curves["size_bytes"], values, linestyle=style, color=color,
                                alpha=0.9 if form == best else 0.45, linewidth=2.2 if form == best else 1.0, label=label)
        ax.set_xscale("log", base=2)
        label_bytes_axis(ax)
        ax.set_xlabel("message size S (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s, 1e9 B/s)")
        ax.set_title("%s: bus bandwidth vs message size [regime: %s]" % (collective, regimes(
            [r for g in groups.values() for r in g])))
        ax.grid(True, which="both", alpha=0.3)
        legend_outside(ax)
        yield "collectives_bandwidth_" + safe_name(collective), laid_out(fig)


def laid_out(fig):
    """The figure as save() writes it (tight layout), so that tests measure what is drawn."""
    fig.tight_layout()
    return fig


def best_by(rows, key_fn, value_column):
    best = {}
    for r in rows:
        key = key_fn(r)
        value = num(r, value_column)
        if value is not None and (key not in best or value > num(best[key], value_column)):
            best[key] = r
    return best


def plot_gemm(results_dir, calibration):
    rows = read_rows(results_dir, "gemm")
    if not rows:
        return skip("gemm_efficiency_heatmap, gemm_roofline", "no ok rows in gemm.csv")
    mem_gbps, mem_source = memory_bandwidth(calibration)
    for dtype in sorted({r["dtype"] for r in rows}):
        drows = [r for r in rows if r["dtype"] == dtype]
        shapes = best_by(drows, lambda r: (int(r["m"]), int(r["n"]), int(r["k"])), "tflops")
        for k in sorted({s[2] for s in shapes}):
            ms = sorted({s[0] for s in shapes if s[2] == k})
            ns = sorted({s[1] for s in shapes if s[2] == k})
            grid = [[float("nan")] * len(ns) for _ in ms]
            for (m, n, kk), r in shapes.items():
                if kk == k:
                    eff = num(r, "efficiency")
                    if eff is None and num(r, "peak_tflops"):
                        eff = num(r, "tflops") / num(r, "peak_tflops")
                    grid[ms.index(m)][ns.index(n)] = eff if eff is not None else float("nan")
            fig, ax = plt.subplots(figsize=(1.2 * len(ns) + 3, 0.9 * len(ms) + 2))
            image = annotated_heatmap(ax, grid, ns, ms, "%.2f", "w", origin="lower", cmap="viridis", vmin=0, vmax=1,
                                      aspect="auto")
            ax.set_xlabel("N (elements: columns of C)")
            ax.set_ylabel("M (elements: rows of C)")
            fig.colorbar(image, ax=ax, label="efficiency (TFLOP/s / peak TFLOP/s)")
            ax.set_title("GEMM %s efficiency, K=%d [regime: %s]" % (dtype, k, regimes(drows)))
            yield "gemm_efficiency_heatmap_%s_k%d" % (safe_name(dtype), k), laid_out(fig)

        points = [(num(r, "arith_intensity_flop_per_byte"), num(r, "tflops")) for r in drows]
        points = [p for p in points if p[0] is not None and p[1] is not None]
        if not points:
            skip("gemm_roofline_" + dtype, "no arith_intensity_flop_per_byte column")
            continue
        fig, ax = plt.subplots(figsize=(9.5, 5))
        ax.plot([p[0] for p in points], [p[1] for p in points], "o", alpha=0.6, label="measured (%s)" % dtype)
        peaks = [num(r, "peak_tflops") for r in drows if num(r, "peak_tflops")]
        lo, hi = min(p[0] for p in points) / 2, max(p[0] for p in points) * 2
        if peaks:
            ax.axhline(max(peaks), color="k", linestyle="--", label="peak %s TFLOP/s" % short(max(peaks)))
        if mem_gbps:
            # The memory roof's slope is the measured bandwidth: flop/byte * GB/s = GFLOP/s.
            if peaks:
                knee = max(peaks) * 1e3 / mem_gbps
                lo, hi = min(lo, knee / 4), max(hi, knee * 4)
            xs = [lo, hi] if not peaks else [lo, knee, hi]
            roof = [x * mem_gbps / 1e3 for x in xs]
            if peaks:
                roof = [min(y, max(peaks)) for y in roof]
            ax.plot(xs, roof, "r-", label="memory roof %s GB/s (%s)" % (short(mem_gbps), mem_source))
        ax.set_xscale("log")
        ax.set_yscale("log")
        label_log_axis(ax, "x")
        label_log_axis(ax, "y")
        ax.set_xlabel("arithmetic intensity (flop/byte)")
        ax.set_ylabel("throughput (TFLOP/s, 1e12 flop/s)")
        ax.set_title("GEMM %s roofline [regime: %s]" % (dtype, regimes(drows)))
        ax.grid(True, which="both", alpha=0.3)
        legend_outside(ax, fontsize=8)
        yield "gemm_roofline_" + safe_name(dtype), laid_out(fig)


def short(value):
    """3 significant digits without rounding small values away: 0.45 -> '0.45', 989.4 -> '989'."""
    return "%.3g" % value


def memory_bandwidth(calibration):
    """(GB/s, source) of the device's memory from calibration.json, or (None, None)."""
    memory = (calibration or {}).get("memory") or {}
    if memory.get("device_bandwidth_gbps"):
        return memory["device_bandwidth_gbps"], memory.get("device_bandwidth_source", "memory plateau")
    if memory.get("d2d_copy"):
        return memory["d2d_copy"]["best_gbps"], "p2p d2d copy"
    return None, None


def cache_levels(results_dir, calibration):
    """[(name, bytes)] from memory.json's cache_levels (or calibration.json's copy of them)."""
    path = os.path.join(results_dir, "memory.json")
    levels = None
    if os.path.exists(path):
        with open(path) as f:
            levels = json.load(f).get("cache_levels")
    if levels is None and calibration and (calibration.get("memory") or {}).get("stream"):
        levels = calibration["memory"]["stream"].get("cache_levels")
    return [(c["name"], float(c["bytes"])) for c in levels or []]


def plot_memory(results_dir, calibration):
    rows = read_rows(results_dir, "memory")
    if not rows:
        return skip("memory_bandwidth, memory_ops", "no ok rows in memory.csv")
    levels = cache_levels(results_dir, calibration)
    stream = [r for r in rows if r.get("family") == "stream"]
    if not stream:
        skip("memory_bandwidth", "no STREAM rows in memory.csv")
    else:
        yield "memory_bandwidth", memory_bandwidth_figure(stream, levels, calibration)
    ops = [r for r in rows if r.get("family") == "op"]
    if not ops:
        return skip("memory_ops", "no op rows in memory.csv")
    yield "memory_ops", memory_ops_figure(ops, stream, levels, calibration)


def mark_cache_levels(ax, levels):
    for name, size in levels:
        ax.axvline(size, color="grey", linestyle=":", linewidth=1)
        ax.annotate("%s %s" % (name, format_bytes(size)), (size, 1), xycoords=("data", "axes fraction"),
                    rotation=90, va="top", ha="right", fontsize=8, color="grey")


def memory_bandwidth_figure(stream, levels, calibration):
    stretches = {}
    if calibration and (calibration.get("memory") or {}).get("stream"):
        for c in calibration["memory"]["stream"]["curves"]:
            stretches[(c["kernel"], c["dtype"], c["impl"])] = c.get("stretches", [])
    fig, ax = plt.subplots(figsize=(10, 5.5))
    curves = collections.defaultdict(list)
    for r in stream:
        curves[(r["kernel"], r["dtype"], r["impl"])].append(r)
    for i, (key, crows) in enumerate(sorted(curves.items())):
        color = "C%d" % (i % 10)
        best = best_by(crows, lambda r: num(r, "working_set_bytes"), "bandwidth_gbps")
        xs = sorted(best)
        ax.plot(xs, [num(best[x], "bandwidth_gbps") for x in xs], "-", color=color, marker="os^D"[i // 10 % 4], ms=4,
                label="%s %s (%s)" % key)
        for p in stretches.get(key, []):
            ax.hlines(p["bandwidth_gbps"], p["working_set_min_bytes"], p["working_set_max_bytes"], colors=color,
                      linewidth=5, alpha=0.35)
    mark_cache_levels(ax, levels)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    label_bytes_axis(ax)
    label_log_axis(ax, "y")
    ax.set_xlabel("working set (bytes: every array of the kernel)")
    ax.set_ylabel("bandwidth (GB/s, 1e9 B/s; STREAM's byte count)")
    title = "STREAM bandwidth vs working set, cache levels marked, plateaus shaded [regime: %s]" % regimes(stream)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax)
    return laid_out(fig)


def dram_bandwidth(stream, levels, calibration):
    """(GB/s, label) of the device memory: calibration.json's, else the median STREAM bandwidth at
    working sets past the last cache level; (None, None) when neither is known."""
    gbps, source = memory_bandwidth(calibration)
    if gbps:
        return gbps, "memory %s GB/s (%s)" % (short(gbps), source)
    if not levels:
        return None, None
    last = max(size for _, size in levels)
    past = sorted(num(r, "bandwidth_gbps") for r in stream if (num(r, "working_set_bytes") or 0) > last)
    if not past:
        return None, None
    median = past[len(past) // 2]
    return median, "DRAM %s GB/s (STREAM median past %s)" % (short(median), format_bytes(last))


def op_family(kernel):
    """('layernorm', 'fwd') from 'layernorm_fwd'; ('adamw_step', 'one pass') without a direction."""
    for direction in ("fwd", "bwd"):
        if kernel.endswith("_" + direction):
            return kernel[:-len(direction) - 1], direction
    return kernel, "one pass"


def cache_note(ops, levels, dram_gbps):
    """The figure's last title lines: what the points above the memory line are."""
    sets = [num(r, "working_set_bytes") or num(r, "bytes") for r in ops]
    lo, hi = min(sets), max(sets)
    holding = [(size, name) for name, size in levels if size >= hi]
    span = "working sets %s-%s" % (approx_bytes(lo), approx_bytes(hi))
    where = "fit in %s (%s)" % (min(holding)[1], format_bytes(min(holding)[0])) if holding else "exceed every cache level"
    if not dram_gbps:
        return "%s %s%s" % (span, where, ": cache-resident figures, not DRAM bandwidth" if holding else "")
    above = sum(1 for r in ops if num(r, "bandwidth_gbps") > dram_gbps)
    if not above:
        return "no op above the memory line; %s %s" % (span, where)
    return "%d of %d points above the memory line: their %s %s,\nso they run from cache, faster than DRAM" % (
        above, len(ops), span, where)


def memory_ops_figure(ops, stream, levels, calibration):
    """One colour per op family, one marker per direction; the legend lists each once."""
    fig, ax = plt.subplots(figsize=(10, 5.5))
    families = sorted({(op_family(r["kernel"])[0], r["dtype"]) for r in ops})
    directions = sorted({op_family(r["kernel"])[1] for r in ops})
    palette = plt.get_cmap("tab10" if len(families) <= 10 else "tab20")
    markers = "osD^v<>Ph*"
    handles = []
    for i, (family, dtype) in enumerate(families):
        color = palette(i % palette.N)
        handles.append(plt.Line2D([], [], color=color, linewidth=3, label="%s %s" % (family, dtype)))
        for direction in directions:
            srows = [r for r in ops if r["dtype"] == dtype and op_family(r["kernel"]) == (family, direction)]
            best = best_by(srows, lambda r: num(r, "bytes"), "bandwidth_gbps")
            xs = sorted(best)
            # Past the palette's colours the markers shift, so that no colour-marker pair repeats.
            marker = markers[(directions.index(direction) + len(directions) * (i // palette.N)) % len(markers)]
            ax.plot(xs, [num(best[x], "bandwidth_gbps") for x in xs], "-", color=color, marker=marker, ms=6)
    for d, direction in enumerate(directions):
        handles.append(plt.Line2D([], [], color="k", linestyle="none", marker=markers[d], label=direction))
    dram_gbps, dram_label = dram_bandwidth(stream, levels, calibration)
    if dram_gbps:
        handles.append(ax.axhline(dram_gbps, color="k", linestyle="--", label=textwrap.fill(dram_label, 40)))
    moved = [num(r, "bytes") for r in ops]
    mark_cache_levels(ax, [(name, size) for name, size in levels if min(moved) / 4 <= size <= 4 * max(moved)])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    label_bytes_axis(ax)
    label_log_axis(ax, "y")
    ax.set_xlabel("bytes moved per op (the minimum it must read and write)")
    ax.set_ylabel("achieved bandwidth (GB/s, 1e9 B/s)")
    ax.set_title("memory-bound ops: bandwidth vs bytes moved [regime: %s]\n%s" % (regimes(ops), cache_note(ops, levels, dram_gbps)),
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize=7)
    return laid_out(fig)


def plot_attention(results_dir):
    rows = read_rows(results_dir, "attention")
    if not rows:
        return skip("attention_tflops", "no ok rows in attention.csv")
    series = collections.defaultdict(list)
    for r in rows:
        key = (r["dtype"], r["pass"], r["causal"], int(r["head_dim"]), r.get("flop_convention", "?"))
        series[key].append(r)
    fig, ax = plt.subplots(figsize=(8, 5))
    for (dtype, pss, causal, head_dim, convention), srows in sorted(series.items()):
        best = best_by(srows, lambda r: int(r["seq_q"]), "tflops")
        seqs = sorted(best)
        ax.plot(seqs, [num(best[s], "tflops") for s in seqs], "o-",
                label="%s %s causal=%s d=%d (%s flops)" % (dtype, pss, causal, head_dim, convention))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    ax.set_xlabel("sequence length (tokens, seq_q)")
    ax.set_ylabel("throughput (TFLOP/s, 1e12 flop/s)")
    ax.set_title("attention throughput vs sequence length [regime: %s]" % regimes(rows))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    yield "attention_tflops", laid_out(fig)


def plot_p2p_pairs(results_dir):
    rows = read_rows(results_dir, "p2p")
    if rows is None:
        return skip("p2p_pair_matrix", "no p2p.csv")
    pair_rows = [r for r in rows if r["pattern"] in ("pairs", "bidir", "sendrecv")]
    if not pair_rows:
        return skip("p2p_pair_matrix", "no ok pairs/sendrecv rows in p2p.csv")
    for pattern in sorted({r["pattern"] for r in pair_rows}):
        prow = [r for r in pair_rows if r["pattern"] == pattern]
        size = max(num(r, "size_bytes") for r in prow)
        pairs = sorted({(int(r["src_rank"]), int(r["dst_rank"])) for r in prow if num(r, "size_bytes") == size})
        if len(pairs) == 1:  # a matrix of one cell says nothing: draw what there is
            prow = [r for r in prow if (int(r["src_rank"]), int(r["dst_rank"])) == pairs[0]]
            print("note: p2p %s: one pair measured (rank %d -> %d): its bandwidth against message size, not a 1-cell "
                  "pair matrix" % ((pattern,) + pairs[0]))
            yield "p2p_pair_bandwidth_" + safe_name(pattern), p2p_pair_line(pattern, pairs[0], prow)
        else:
            yield "p2p_pair_matrix_" + safe_name(pattern), p2p_pair_matrix(pattern, prow)


def p2p_pair_line(pattern, pair, prow):
    best = best_by(prow, lambda r: num(r, "size_bytes"), "bandwidth_gbps")
    sizes = sorted(best)
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(sizes, [num(best[s], "bandwidth_gbps") for s in sizes], "o-", color="C0")
    ax.set_xscale("log", base=2)
    label_bytes_axis(ax)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bandwidth (GB/s, 1e9 B/s)")
    ax.set_title("p2p %s bandwidth of the one measured pair, rank %d -> %d [regime: %s]" % (
        (pattern,) + pair + (regimes(prow),)), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    return laid_out(fig)


def p2p_pair_matrix(pattern, prow):
    size = max(num(r, "size_bytes") for r in prow)
    at_size = [r for r in prow if num(r, "size_bytes") == size]
    ranks = sorted({int(r["src_rank"]) for r in at_size} | {int(r["dst_rank"]) for r in at_size})
    grid = [[float("nan")] * len(ranks) for _ in ranks]
    for r in at_size:
        i, j = ranks.index(int(r["src_rank"])), ranks.index(int(r["dst_rank"]))
        bw = num(r, "bandwidth_gbps")
        grid[i][j] = bw if math.isnan(grid[i][j]) else max(grid[i][j], bw)
    fig, ax = plt.subplots(figsize=(0.8 * len(ranks) + 3, 0.8 * len(ranks) + 2))
    image = annotated_heatmap(ax, grid, ranks, ranks, "%.0f", "c", cmap="magma", origin="upper")
    ax.set_xlabel("destination rank (process index)")
    ax.set_ylabel("source rank (process index)")
    fig.colorbar(image, ax=ax, label="bandwidth (GB/s, 1e9 B/s)")
    ax.set_title("p2p %s bandwidth at %s [regime: %s]" % (pattern, format_bytes(size), regimes(at_size)))
    return laid_out(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results_dir")
    parser.add_argument("-o", "--out", help="output folder (default RESULTS_DIR/plots)")
    args = parser.parse_args()
    if not os.path.isdir(args.results_dir):
        sys.exit("plot_results.py: error: %s: not a directory" % args.results_dir)
    out_dir = args.out or os.path.join(args.results_dir, "plots")
    for name, fig in figures(args.results_dir):
        save(fig, out_dir, name)


def figures(results_dir):
    """(name, Figure) of each figure the results folder has rows for; a skipped one is printed."""
    calibration = read_calibration(results_dir)
    yield from plot_collectives(results_dir, calibration)
    yield from plot_gemm(results_dir, calibration)
    yield from plot_attention(results_dir)
    yield from plot_p2p_pairs(results_dir)
    yield from plot_memory(results_dir, calibration)

if __name__ == "__main__":
    main()
