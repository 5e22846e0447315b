"""Launch-level statistics for the side-by-side comparisons (compare_osu.sh, compare_stream.sh).

A launch of either tool can land in a fast or a slow state for its whole run (page placement,
which cores its ranks or threads got, a competitor), so one launch per tool per round gives
ratios that swing with the states the two launches happened to hit. The scripts therefore run
many short launches of each tool per round, interleaved, and compare distributions of launch
figures (one figure per launch: its median or mean time), not single launches:

- modes(): the launch figures split at their widest gap when it is a real gap (the upper side at
  least GAP_RATIO x the lower, each side at least MIN_MODE_SHARE of the launches and 2 launches):
  both modes are then named with their share;
- compare(): the ratio of the tools' medians over launches, and the state-matched ratio, fast
  state against fast state (each tool's lowest mode, its median when unimodal): a state is a
  property of the launch, not of the tool, so like-for-like is fast against fast. The verdict
  uses the state-matched ratio.
"""
import statistics

GAP_RATIO = 1.25
MIN_MODE_SHARE = 0.2


def quantile(values, q):
    """Linear interpolation between order statistics (numpy's default, gpucal's percentiles)."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def modes(values):
    """[(median, share), ...] of the launch figures: two entries when bimodal, else one."""
    v = sorted(values)
    n = len(v)
    min_side = max(2, MIN_MODE_SHARE * n)
    best = None
    for i in range(1, n):
        if i < min_side or n - i < min_side or v[i - 1] <= 0:
            continue
        ratio = v[i] / v[i - 1]
        if ratio >= GAP_RATIO and (best is None or ratio > best[0]):
            best = (ratio, i)
    if best is None:
        return [(statistics.median(v), 1.0)]
    i = best[1]
    return [(statistics.median(v[:i]), i / n), (statistics.median(v[i:]), (n - i) / n)]


def summary(values):
    return {"n": len(values), "median": statistics.median(values), "p10": quantile(values, 0.1),
            "p90": quantile(values, 0.9), "modes": modes(values)}


def describe(s, unit="us"):
    """'205.1 us (p10 181.0, p90 224.0, 12 launches)' or, bimodal, both modes named."""
    text = f"{s['median']:.4g} {unit} (p10 {s['p10']:.4g}, p90 {s['p90']:.4g}, {s['n']} launches)"
    if len(s["modes"]) == 2:
        (a, sa), (b, sb) = s["modes"]
        text += f"; bimodal: {a:.4g} {unit} ({100 * sa:.0f}%) and {b:.4g} {unit} ({100 * sb:.0f}%)"
    return text


def compare(ours, theirs):
    """Ratios of our launch figures over theirs (times: > 1 is slower):
    {'median_ratio', 'state_ratio', 'ours', 'theirs'}."""
    a, b = summary(ours), summary(theirs)
    return {"median_ratio": a["median"] / b["median"], "state_ratio": a["modes"][0][0] / b["modes"][0][0],
            "ours": a, "theirs": b}
