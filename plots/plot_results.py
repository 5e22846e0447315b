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
  p2p_pair_matrix_<pattern>            p2p bandwidth per (source, destination) rank
  memory_bandwidth                     STREAM bandwidth against working set per kernel and dtype, the
                                       cache levels of memory.json marked, calibration.json's plateaus shaded
  memory_ops                           each memory-bound op's bandwidth against bytes moved, with the
                                       device's memory bandwidth
A figure whose input rows are absent is skipped with a printed reason. Needs matplotlib; run
with /usr/bin/python3 on Debian (the system Python has python3-matplotlib).
"""
import argparse
import collections
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpucal_plot_common import annotated_heatmap, format_bytes, num, plt, read_calibration, read_rows, regimes, safe_name, save, skip  # noqa: E402


def plot_collectives(results_dir, calibration, out_dir):
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
        key = (r["dtype"], int(r["nranks"]), int(r["nnodes"]))
        by_collective[r["collective"]][key].append(r)
    styles = {"alpha_beta": "-", "sigmoid": "--", "piecewise": ":", "regime": "-.", "table": (0, (1, 1))}
    for collective, groups in sorted(by_collective.items()):
        fig, ax = plt.subplots(figsize=(8, 5))
        for i, (key, group_rows) in enumerate(sorted(groups.items())):
            dtype, nranks, nnodes = key
            color = "C%d" % (i % 10)
            pts = sorted((num(r, "size_bytes"), num(r, "busbw_gbps")) for r in group_rows)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o", color=color,
                    label="%s n=%d nodes=%d (measured)" % (dtype, nranks, nnodes))
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
        ax.set_xlabel("message size S (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s, 1e9 B/s)")
        ax.set_title("%s: bus bandwidth vs message size [regime: %s]" % (collective, regimes(
            [r for g in groups.values() for r in g])))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, out_dir, "collectives_bandwidth_" + safe_name(collective))


def best_by(rows, key_fn, value_column):
    best = {}
    for r in rows:
        key = key_fn(r)
        value = num(r, value_column)
        if value is not None and (key not in best or value > num(best[key], value_column)):
            best[key] = r
    return best


def plot_gemm(results_dir, calibration, out_dir):
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
            ax.set_xlabel("N")
            ax.set_ylabel("M")
            fig.colorbar(image, ax=ax, label="efficiency (TFLOP/s / peak TFLOP/s)")
            ax.set_title("GEMM %s efficiency, K=%d [regime: %s]" % (dtype, k, regimes(drows)))
            save(fig, out_dir, "gemm_efficiency_heatmap_%s_k%d" % (safe_name(dtype), k))

        points = [(num(r, "arith_intensity_flop_per_byte"), num(r, "tflops")) for r in drows]
        points = [p for p in points if p[0] is not None and p[1] is not None]
        if not points:
            skip("gemm_roofline_" + dtype, "no arith_intensity_flop_per_byte column")
            continue
        fig, ax = plt.subplots(figsize=(7, 5))
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
        ax.set_xlabel("arithmetic intensity (flop/byte)")
        ax.set_ylabel("throughput (TFLOP/s, 1e12 flop/s)")
        ax.set_title("GEMM %s roofline [regime: %s]" % (dtype, regimes(drows)))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, out_dir, "gemm_roofline_" + safe_name(dtype))


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


def plot_memory(results_dir, calibration, out_dir):
    rows = read_rows(results_dir, "memory")
    if not rows:
        return skip("memory_bandwidth, memory_ops", "no ok rows in memory.csv")
    levels = cache_levels(results_dir, calibration)
    stream = [r for r in rows if r.get("family") == "stream"]
    stretches = {}
    if calibration and (calibration.get("memory") or {}).get("stream"):
        for c in calibration["memory"]["stream"]["curves"]:
            stretches[(c["kernel"], c["dtype"], c["impl"])] = c.get("stretches", [])
    if not stream:
        skip("memory_bandwidth", "no STREAM rows in memory.csv")
    else:
        fig, ax = plt.subplots(figsize=(9, 5.5))
        curves = collections.defaultdict(list)
        for r in stream:
            curves[(r["kernel"], r["dtype"], r["impl"])].append(r)
        for i, (key, crows) in enumerate(sorted(curves.items())):
            color = "C%d" % (i % 10)
            best = best_by(crows, lambda r: num(r, "working_set_bytes"), "bandwidth_gbps")
            xs = sorted(best)
            ax.plot(xs, [num(best[x], "bandwidth_gbps") for x in xs], "o-", color=color, ms=4,
                    label="%s %s (%s)" % key)
            for p in stretches.get(key, []):
                ax.hlines(p["bandwidth_gbps"], p["working_set_min_bytes"], p["working_set_max_bytes"], colors=color,
                          linewidth=5, alpha=0.35)
        for name, size in levels:
            ax.axvline(size, color="grey", linestyle=":", linewidth=1)
            ax.annotate("%s %s" % (name, format_bytes(size)), (size, 1), xycoords=("data", "axes fraction"),
                        rotation=90, va="top", ha="right", fontsize=8, color="grey")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("working set (bytes: every array of the kernel)")
        ax.set_ylabel("bandwidth (GB/s, 1e9 B/s; STREAM's byte count)")
        title = "STREAM bandwidth vs working set, cache levels marked, plateaus shaded [regime: %s]" % regimes(stream)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        save(fig, out_dir, "memory_bandwidth")
    ops = [r for r in rows if r.get("family") == "op"]
    if not ops:
        return skip("memory_ops", "no op rows in memory.csv")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    series = collections.defaultdict(list)
    for r in ops:
        series[(r["kernel"], r["dtype"])].append(r)
    for i, (key, srows) in enumerate(sorted(series.items())):
        best = best_by(srows, lambda r: num(r, "bytes"), "bandwidth_gbps")
        xs = sorted(best)
        ax.plot(xs, [num(best[x], "bandwidth_gbps") for x in xs], "-", color="C%d" % (i % 10),
                marker="osv^<>"[i // 10 % 6], ms=4, label="%s %s" % key)
    mem_gbps, mem_source = memory_bandwidth(calibration)
    if mem_gbps:
        ax.axhline(mem_gbps, color="k", linestyle="--", label="memory %s GB/s (%s)" % (short(mem_gbps), mem_source))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes moved per op (the minimum it must read and write)")
    ax.set_ylabel("achieved bandwidth (GB/s, 1e9 B/s)")
    ax.set_title("memory-bound ops: bandwidth vs bytes moved [regime: %s]" % regimes(ops), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    save(fig, out_dir, "memory_ops")


def plot_attention(results_dir, out_dir):
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
    ax.set_xlabel("sequence length (tokens, seq_q)")
    ax.set_ylabel("throughput (TFLOP/s, 1e12 flop/s)")
    ax.set_title("attention throughput vs sequence length [regime: %s]" % regimes(rows))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    save(fig, out_dir, "attention_tflops")


def plot_p2p_pairs(results_dir, out_dir):
    rows = read_rows(results_dir, "p2p")
    if rows is None:
        return skip("p2p_pair_matrix", "no p2p.csv")
    pair_rows = [r for r in rows if r["pattern"] in ("pairs", "bidir", "sendrecv")]
    if not pair_rows:
        return skip("p2p_pair_matrix", "no ok pairs/sendrecv rows in p2p.csv")
    for pattern in sorted({r["pattern"] for r in pair_rows}):
        prow = [r for r in pair_rows if r["pattern"] == pattern]
        size = max(num(r, "size_bytes") for r in prow)
        at_size = [r for r in prow if num(r, "size_bytes") == size]
        ranks = sorted({int(r["src_rank"]) for r in at_size} | {int(r["dst_rank"]) for r in at_size})
        if len(ranks) < 2:
            skip("p2p_pair_matrix_" + pattern, "fewer than 2 ranks")
            continue
        grid = [[float("nan")] * len(ranks) for _ in ranks]
        for r in at_size:
            i, j = ranks.index(int(r["src_rank"])), ranks.index(int(r["dst_rank"]))
            bw = num(r, "bandwidth_gbps")
            grid[i][j] = bw if math.isnan(grid[i][j]) else max(grid[i][j], bw)
        fig, ax = plt.subplots(figsize=(0.8 * len(ranks) + 3, 0.8 * len(ranks) + 2))
        image = annotated_heatmap(ax, grid, ranks, ranks, "%.0f", "c", cmap="magma", origin="upper")
        ax.set_xlabel("destination rank")
        ax.set_ylabel("source rank")
        fig.colorbar(image, ax=ax, label="bandwidth (GB/s, 1e9 B/s)")
        ax.set_title("p2p %s bandwidth at %s [regime: %s]" % (pattern, format_bytes(size), regimes(at_size)))
        save(fig, out_dir, "p2p_pair_matrix_" + safe_name(pattern))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results_dir")
    parser.add_argument("-o", "--out", help="output folder (default RESULTS_DIR/plots)")
    args = parser.parse_args()
    if not os.path.isdir(args.results_dir):
        sys.exit("plot_results.py: error: %s: not a directory" % args.results_dir)
    out_dir = args.out or os.path.join(args.results_dir, "plots")
    calibration = read_calibration(args.results_dir)
    plot_collectives(args.results_dir, calibration, out_dir)
    plot_gemm(args.results_dir, calibration, out_dir)
    plot_attention(args.results_dir, out_dir)
    plot_p2p_pairs(args.results_dir, out_dir)
    plot_memory(args.results_dir, calibration, out_dir)


if __name__ == "__main__":
    main()
