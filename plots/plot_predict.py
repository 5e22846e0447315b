#!/usr/bin/env python3
"""The step-time breakdown of `gpucal predict` as a stacked bar.

    plot_predict.py PREDICT_JSON [-o OUT_DIR]      (default OUT_DIR: the file's folder/plots)

One bar for a single prediction, one per layout (fastest first) for a --sweep file. Segments
(ms per step on one rank): compute gemm, attention, memory-bound; exposed communication per
dimension (tp, dp, pp, cp, ep); the pipeline bubble; hidden communication is drawn hatched
beside the bar's total, not in it. With a measured step (predict.json `measured_step`) a
marker shows bench_step's median with its p10-p90 range. Writes predict_breakdown.png/.svg.
Needs matplotlib: run with /usr/bin/python3 on Debian (python3-matplotlib); without it the
figure is skipped with the reason.
"""
import argparse
import json
import os
import sys

SEGMENTS = [("gemm", "compute: GEMM"), ("attention", "compute: attention"), ("memory", "compute: memory-bound")]
DIMS = ["tp", "dp", "pp", "cp", "ep"]


def bars(doc):
    if "ranked" in doc:
        out = []
        for r in doc["ranked"]:
            l = r["layout"]
            label = "tp%d pp%d dp%d cp%d mb%d gb%d z%d" % (l["tp"], l["pp"], l["dp"], l["cp"], l["micro_batch"],
                                                           l["global_batch"], l["zero"])
            if r.get("complete") is False:  # its step lacks the operations it left out (--allow-missing)
                label += " (incomplete)"
            out.append((label, r["breakdown"], None))
        return out
    l = doc["layout"]
    return [("tp%d pp%d dp%d cp%d" % (l["tp"], l["pp"], l["dp"], l["cp"]), doc["breakdown"], doc.get("measured_step"))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("predict_json")
    ap.add_argument("-o", "--out-dir")
    a = ap.parse_args()
    try:
        doc = json.load(open(a.predict_json))
    except (OSError, ValueError) as e:
        sys.stderr.write("plot_predict.py: cannot read %s: %s\n" % (a.predict_json, e))
        return 2
    out_dir = a.out_dir or os.path.join(os.path.dirname(os.path.abspath(a.predict_json)), "plots")
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from gpucal_plot_common import plt, save  # noqa: E402
    except ImportError as e:
        print("skip predict_breakdown: matplotlib unavailable (%s); run with /usr/bin/python3" % e)
        return 0
    entries = bars(doc)
    if not entries:
        print("skip predict_breakdown: no layout in %s" % a.predict_json)
        return 0
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(entries) + 3), 4.5))
    x = list(range(len(entries)))
    bottom = [0.0] * len(entries)

    def stack(values, label, **kw):
        ax.bar(x, values, bottom=bottom, label=label, width=0.6, **kw)
        for i, v in enumerate(values):
            bottom[i] += v

    for key, label in SEGMENTS:
        stack([b["compute"][key]["time_s"] * 1e3 for _, b, _ in entries], label)
    for d in DIMS:
        vals = [b["communication"].get(d, {}).get("exposed_s", 0) * 1e3 for _, b, _ in entries]
        if any(v > 0 for v in vals):
            stack(vals, "exposed comm: " + d)
    bub = [b["bubble"]["time_s"] * 1e3 for _, b, _ in entries]
    if any(v > 0 for v in bub):
        stack(bub, "pipeline bubble", color="lightgrey")
    hidden = [sum(c.get("hidden_s", 0) for c in b["communication"].values()) * 1e3 for _, b, _ in entries]
    if any(v > 0 for v in hidden):
        ax.bar([i + 0.35 for i in x], hidden, width=0.1, color="none", edgecolor="black", hatch="//",
               label="hidden comm (not in the step)")
    for i, (_, b, m) in enumerate(entries):
        if m:
            med, lo, hi = m["time_s_median"] * 1e3, m["p10_s"] * 1e3, m["p90_s"] * 1e3
            ax.errorbar([i], [med], yerr=[[med - lo], [hi - med]], fmt="D", color="black",
                        label="measured step (bench_step, p10-p90)")
    ax.set_xticks(x)
    ax.set_xticklabels([n for n, _, _ in entries], rotation=20 if len(entries) > 3 else 0)
    ax.set_ylabel("ms per step (one rank)")
    model = doc.get("model", {}).get("name", "")
    policy = doc.get("policy", {})
    ax.set_title("gpucal predict %s (overlap %s, %s)" % (model, policy.get("overlap", ""), policy.get("schedule", "")))
    ax.legend(fontsize=7)
    save(fig, out_dir, "predict_breakdown")
    return 0


if __name__ == "__main__":
    sys.exit(main())
