"""The GPU reference targets, computed from a results folder of .ci/gpu-check (results/reference/<device>/):
each target's measured value, the points it counts and a verdict.

Verdicts: `met`; `missed` (a point or the statistic is past the threshold); `incomplete` (every
measured point meets it, but some points of the set have no measurement: `why` says which);
`not measured` (nothing to compute from: `why` names the absent file or the skipped rows);
`recorded` (a figure the issue asks for without a threshold). GEMM, attention, copies and
collectives are read from the folder itself, the harness checks from its harness/ subfolder,
telemetry from every gpucal CSV of the folder and its subfolders.

ours_vs_torch = PyTorch median time / gpucal median time (> 1: gpucal faster), as in ratios.py.
"""
import json
import os
import re
import statistics
from collections import namedtuple

from results_folder import folders, gpucal_rows, is_ok, number, read_csv, torch_rows

Target = namedtuple("Target", "id wording threshold rule")

# The GPU reference targets, in words, with the threshold each is judged by and how.
TARGETS = [
    Target("gemm_bf16_heuristic", "GEMM bf16, heuristic: ≥ 0.98× torch.matmul on every shape of the llm set and "
           "4096³/8192³", 0.98, "min over shapes of ours_vs_torch ≥ 0.98"),
    Target("gemm_fp16_heuristic", "GEMM fp16, heuristic: ≥ 0.98× torch.matmul on every shape of the llm set and "
           "4096³/8192³", 0.98, "min over shapes of ours_vs_torch ≥ 0.98"),
    Target("gemm_autotuned", "GEMM autotuned median ≥ 1.03×", 1.03, "median over points of ours_vs_torch ≥ 1.03"),
    Target("gemm_bf16_8192_peak", "bf16 8192³ ≥ 80% of the dense peak (H100 SXM 989 TFLOP/s)", 0.80,
           "2mnk / time ÷ dense peak ≥ 0.80"),
    Target("gemm_fp8_8192", "fp8 e4m3 8192³ against torch._scaled_mm ≥ 0.98×", 0.98, "ours_vs_torch ≥ 0.98"),
    Target("attention_cudnn_fwd", "Attention: our cuDNN path ≥ 0.98× the best PyTorch SDPA backend per shape, "
           "forward", 0.98, "min over shapes of best SDPA time / ours ≥ 0.98"),
    Target("attention_cudnn_bwd", "Attention: our cuDNN path ≥ 0.98× the best PyTorch SDPA backend per shape, "
           "backward", 0.98, "min over shapes of best SDPA time / ours ≥ 0.98"),
    Target("attention_flash_vs_cudnn", "our portable flash kernel's forward ≥ 0.5× cuDNN at d=128, s ≥ 4096 (the "
           "ratio whatever it is, with the kernel's achieved TFLOP/s and registers/occupancy)", 0.5,
           "min over shapes of cuDNN time / flash time ≥ 0.5"),
    Target("copy_d2d", "Copies: D2D ≥ 95% of the torch device copy", 0.95,
           "min over sizes ≥ 1 MiB of torch time / ours ≥ 0.95"),
    Target("copy_h2d_pinned", "Copies: H2D pinned ≥ 95% of torch pinned copies", 0.95,
           "min over sizes ≥ 1 MiB of torch time / ours ≥ 0.95"),
    Target("copy_d2h_pinned", "Copies: D2H pinned ≥ 95% of torch pinned copies", 0.95,
           "min over sizes ≥ 1 MiB of torch time / ours ≥ 0.95"),
    Target("collectives_latency_floor", "Collectives at one rank (NCCL): the latency floor", None,
           "per collective: the smallest size's median, ours and PyTorch's"),
    Target("collectives_wrong_zero", "Collectives: every collective validated with wrong = 0", 0,
           "rows with wrong ≠ 0, verified ≠ ok or status error = 0"),
    Target("harness_repeat_spread", "Harness: the same GEMM point run 5 times as separate processes: spread of "
           "medians ≤ 1% for points ≥ 100 µs", 0.01, "worst (max − min) / median of the 5 medians ≤ 0.01"),
    Target("harness_cold_slower", "Harness: cold is slower than hot at 1024³ bf16 (the flush works)", 1.0,
           "cold median / hot median > 1"),
    Target("harness_telemetry", "Harness: telemetry columns (sm_clock_mhz, power_w) filled", 1.0,
           "fraction of ok gpucal rows with both filled = 1"),
    Target("sanitizer_clean", "compute-sanitizer --tool memcheck and --tool racecheck clean on the flash kernels "
           "and the rotated GEMM with odd shapes", 0, "entries with errors ≠ 0 or rc ≠ 0 = 0, both tools run"),
    Target("suite_durations", "How long gpucal run --suite calibration takes; the duration of each suite", None,
           "seconds per suite (no threshold)"),
]
TARGET_BY_ID = {t.id: t for t in TARGETS}

# Dense bf16 tensor peaks, TFLOP/s (first substring of the device name that matches). The issue
# names H100 SXM's; H100 PCIe's is NVIDIA's datasheet figure; an H200 is the same GH100 die with
# H100 SXM's tensor cores and clocks (only its memory differs), so the same 989. Other devices:
# the gpucal row's own peak_tflops (core/formulas/peaks.cpp, its peak_source says from where), or none.
DENSE_BF16_PEAK_TFLOPS = [("H100 PCIe", 756.0, "H100 PCIe datasheet"), ("H100 NVL", None, ""),
                          ("H200", 989.0, "H200: H100 SXM's tensor cores and clocks, the same 989"),
                          ("H100", 989.0, "H100 SXM datasheet")]
SQUARES = (4096, 8192)  # the two square GEMM shapes the target adds to the llm set
COPY_MIN_BYTES = 1 << 20  # copies below 1 MiB measure latency, not bandwidth: not counted
REPEATS = 5  # harness/repeat-1.csv ... repeat-5.csv
REPEAT_MIN_US = 100.0  # the spread target holds for points of at least this median
FLASH_HEAD_DIM, FLASH_MIN_SEQ = 128, 4096

GEMM_KEY = re.compile(r"^gemm/(?P<impl>[^/]+)/(?P<dtype>[^/]+)/(?P<layout>[^/]+)/m(?P<m>\d+)/n(?P<n>\d+)/k(?P<k>\d+)"
                      r"/b(?P<batch>\d+)(?P<extra>(?:/[^/]+)*?)/(?P<regime>[^/]+)$")
ATTENTION_KEY = re.compile(r"^attention/(?P<impl>[^/]+)/(?P<dtype>[^/]+)/(?P<pass>[^/]+)/(?P<layout>[^/]+)/b\d+/h\d+"
                           r"/kv\d+/sq(?P<sq>\d+)/skv(?P<skv>\d+)/d(?P<d>\d+)/causal(?P<causal>[01])/(?P<regime>[^/]+)$")
COPY_KEY = re.compile(r"^p2p/copy/(?P<engine>[^/]+)/(?P<direction>[^/]+)/(?P<memory>[^/]+)/(?:[^/]+/)*?"
                      r"(?P<size>\d+[KMGT]?)/(?P<regime>[^/]+)$")
COLLECTIVE_KEY = re.compile(r"^collectives/(?P<impl>[^/]+)/(?P<collective>[^/]+)/(?P<dtype>[^/]+)/(?:[^/]+/)*?"
                            r"n(?P<nranks>\d+)/(?P<place>ip|oop)/(?P<size>\d+[KMGT]?)/(?P<regime>[^/]+)(?P<graph>/graph)?$")


def parse(pattern, point):
    m = pattern.match(point or "")
    return m.groupdict() if m else None


def gemm_key(point):
    """The GEMM point's fields plus `autotune` ("autotune4", or "" for the heuristic)."""
    g = parse(GEMM_KEY, point)
    if g:
        g["autotune"] = next((s for s in g["extra"].split("/") if re.fullmatch(r"autotune\d+", s)), "")
    return g


def size_bytes(text):
    """bench_*'s format_size back to bytes: 4K, 1M, 1G (powers of 1024)."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    return int(text[:-1]) * scale[text[-1]] if text[-1] in scale else int(text)


def speed(row, reference):
    """reference time / row time: above 1, row is faster (ours_vs_torch when row is ours, the torch row the reference)."""
    return number(reference["time_us_median"]) / number(row["time_us_median"])


class Folder:
    """One folder's gpucal rows (every status) and torch rows, indexed by (bench, point)."""

    def __init__(self, path):
        self.path = path
        self.ours = gpucal_rows(path) if os.path.isdir(path) else []
        self.torch = torch_rows(path) if os.path.isdir(path) else []
        self.ours_ok = {(r["bench"], r["point"]): r for r in self.ours if is_ok(r)}
        self.torch_by_point = {}
        for t in self.torch:
            self.torch_by_point.setdefault((t.get("bench", ""), t.get("point", "")), []).append(t)

    def torch_ok(self, bench, point, op_prefix):
        return [t for t in self.torch_by_point.get((bench, point), [])
                if t.get("torch_op", "").startswith(op_prefix) and is_ok(t)]

    def vs_torch(self, bench, op_prefix):
        """point -> (ours_vs_torch against its ok torch row of op_prefix, "") or None."""
        def per_point(p):
            theirs, ours = self.torch_ok(bench, p, op_prefix), self.ours_ok.get((bench, p))
            return (speed(ours, theirs[0]), "") if theirs and ours else None
        return per_point

    def gemm_points(self, keep):
        """Sorted points (any status) of the folder's GEMM rows whose parsed key passes keep."""
        return sorted(r["point"] for r in self.ours if r["bench"] == "gemm" and (g := gemm_key(r["point"])) and keep(g))

    def why_unmeasured(self, bench, points, op_prefix):
        """Why these gpucal points have no ratio: not ok on our side, no torch row, or torch skipped."""
        ours_bad, no_torch, torch_bad = [], [], []
        for p in points:
            theirs = [t for t in self.torch_by_point.get((bench, p), []) if t.get("torch_op", "").startswith(op_prefix)]
            if (bench, p) not in self.ours_ok:
                ours_bad.append(p)
            elif not theirs:
                no_torch.append(p)
            elif not any(is_ok(t) for t in theirs):
                torch_bad.append((p, theirs[0].get("detail", "")))
        out = []
        if ours_bad:
            row = next(r for r in self.ours if r["point"] == ours_bad[0])
            state = f"{row.get('status')} {row.get('status_detail', '')}".strip()
            out.append(f"{len(ours_bad)} gpucal rows not ok (e.g. {ours_bad[0]}: {state})")
        if no_torch:
            out.append(f"{len(no_torch)} points without a {op_prefix} row (torch_{bench}.csv absent or cut short; "
                       f"e.g. {no_torch[0]})")
        if torch_bad:
            out.append(f"{len(torch_bad)} {op_prefix} rows skipped (e.g. {torch_bad[0][0]}: {torch_bad[0][1]})")
        return "; ".join(out)


def result(target_id, verdict, measured="-", value=None, points=0, why="", details=None):
    t = TARGET_BY_ID[target_id]
    return {"id": t.id, "target": t.wording, "threshold": t.threshold, "rule": t.rule, "measured": measured,
            "value": value, "points": points, "verdict": verdict, "why": why, "details": details or []}


def judge_minimum(target_id, keys, per_key, explain, empty_why, complete_also=()):
    """A min-over-points target. per_key(key) -> (value, note) or None (no measurement there);
    explain(keys without one) -> why; complete_also: further reasons the set is incomplete."""
    t = TARGET_BY_ID[target_id]
    if not keys:
        return result(target_id, "not measured", why=empty_why)
    measured = {k: v for k in keys if (v := per_key(k)) is not None}
    missing = [k for k in keys if k not in measured]
    why = explain(missing) if missing else ""
    if not measured:
        return result(target_id, "not measured", why=why)
    worst = min(measured, key=lambda k: measured[k][0])
    value = measured[worst][0]
    below = [k for k in measured if measured[k][0] < t.threshold]
    text = f"min {value:.3f} at {worst}{measured[worst][1]}; {len(below)} of {len(measured)} below {t.threshold:g}"
    details = [{"point": k, "value": v, "note": n.strip(" ()")} for k, (v, n) in sorted(measured.items())]
    lacking = [c for c in complete_also if c]
    if below:
        verdict = "missed"
    elif missing or lacking:
        verdict, why = "incomplete", "; ".join(x for x in [why] + lacking if x)
    else:
        verdict = "met"
    return result(target_id, verdict, text, value, len(measured), why, details)


def gemm_heuristic(folder, dtype):
    points = folder.gemm_points(lambda g: g["dtype"] == dtype and not g["autotune"])
    per_point = folder.vs_torch("gemm", "torch.matmul")
    shapes = {(int(g["m"]), int(g["n"]), int(g["k"])) for p in points if (g := gemm_key(p)) and per_point(p)}
    absent = [f"{s}³ not measured" for s in SQUARES if (s, s, s) not in shapes]
    return judge_minimum(f"gemm_{dtype}_heuristic", points, per_point,
                         lambda missing: folder.why_unmeasured("gemm", missing, "torch.matmul"),
                         f"no GEMM {dtype} heuristic row (gemm_{dtype}.csv absent or empty)", absent)


def gemm_autotuned(folder):
    points = folder.gemm_points(lambda g: g["autotune"])
    tid, t = "gemm_autotuned", TARGET_BY_ID["gemm_autotuned"]
    if not points:
        return result(tid, "not measured", why="no autotuned GEMM row (gemm_bf16_autotune.csv absent or empty)")
    per_point = folder.vs_torch("gemm", "torch.matmul")
    values = {p: v[0] for p in points if (v := per_point(p))}
    missing = [p for p in points if p not in values]
    why = folder.why_unmeasured("gemm", missing, "torch.matmul") if missing else ""
    if not values:
        return result(tid, "not measured", why=why)
    median = statistics.median(values.values())
    dtypes = ", ".join(sorted({gemm_key(p)["dtype"] + " " + gemm_key(p)["autotune"] for p in values}))
    text = f"median {median:.3f} ({dtypes}; min {min(values.values()):.3f}, max {max(values.values()):.3f})"
    details = [{"point": p, "value": v} for p, v in sorted(values.items())]
    return result(tid, "met" if median >= t.threshold else "missed", text, median, len(values), why, details)


def dense_peak(row, sidecar_dir):
    """(TFLOP/s, source) of the row's device, or (None, why)."""
    name = row.get("device", "")
    if not name:
        path = os.path.join(sidecar_dir, os.path.splitext(row["_file"])[0] + ".json")
        if os.path.exists(path):
            with open(path) as f:
                name = json.load(f).get("device", {}).get("name", "")
    for match, peak, source in DENSE_BF16_PEAK_TFLOPS:
        if match in name:
            if peak:
                return peak, f"{name}: {source}"
            break
    if number(row.get("peak_tflops")):
        return number(row["peak_tflops"]), f"{name}: the row's peak_tflops ({row.get('peak_source', '?')})"
    return None, f"no peak known for {name or 'an unnamed device'}"


def gemm_peak(folder):
    tid, t = "gemm_bf16_8192_peak", TARGET_BY_ID["gemm_bf16_8192_peak"]
    points = folder.gemm_points(lambda g: g["dtype"] == "bf16" and not g["autotune"]
                                and (g["m"], g["n"], g["k"], g["batch"]) == ("8192",) * 3 + ("1",))
    rows = [folder.ours_ok[("gemm", p)] for p in points if ("gemm", p) in folder.ours_ok]
    if not rows:
        return result(tid, "not measured", why="no ok heuristic bf16 8192³ row (gemm_bf16.csv)")
    best = min(rows, key=lambda r: number(r["time_us_median"]))
    tflops = 2.0 * 8192 ** 3 / number(best["time_us_median"]) / 1e6
    peak, source = dense_peak(best, folder.path)
    if peak is None:
        return result(tid, "not measured", f"{tflops:.1f} TFLOP/s at {best['point']}", None, len(rows), source)
    frac = tflops / peak
    return result(tid, "met" if frac >= t.threshold else "missed",
                  f"{frac:.3f} of {peak:g} TFLOP/s ({tflops:.1f} TFLOP/s at {best['point']})", frac, len(rows),
                  f"peak: {source}", [{"point": best["point"], "tflops": tflops, "peak_tflops": peak}])


def gemm_fp8(folder):
    points = folder.gemm_points(lambda g: g["dtype"] == "fp8_e4m3" and not g["autotune"]
                                and (g["m"], g["n"], g["k"]) == ("8192",) * 3)
    return judge_minimum("gemm_fp8_8192", points, folder.vs_torch("gemm", "torch._scaled_mm"),
                         lambda missing: folder.why_unmeasured("gemm", missing, "torch._scaled_mm"),
                         "no GEMM fp8_e4m3 8192³ heuristic row (gemm_fp8_e4m3.csv absent or empty)")


def attention_cudnn(folder, pas):
    """Per shape: the fastest ok SDPA backend's time (torch rows sdpa:<backend> of the point) / ours."""
    points = sorted(r["point"] for r in folder.ours if r["bench"] == "attention"
                    and (a := parse(ATTENTION_KEY, r["point"])) and a["impl"] == "cudnn" and a["pass"] == pas)

    def per_point(p):
        theirs = folder.torch_ok("attention", p, "sdpa:")
        if not theirs or ("attention", p) not in folder.ours_ok:
            return None
        best = min(theirs, key=lambda t: number(t["time_us_median"]))
        return speed(folder.ours_ok[("attention", p)], best), f" (best SDPA backend there: {best['torch_op']})"

    return judge_minimum(f"attention_cudnn_{pas}", points, per_point,
                         lambda missing: folder.why_unmeasured("attention", missing, "sdpa:"),
                         f"no cudnn {pas} attention row (attention.csv absent or empty)")


def sidecar_kernel_resources(folder, files):
    """'see the sidecar X: ...' where a bench_attention sidecar records registers or occupancy."""
    found = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if any(w in k.lower() for w in ("register", "occupancy")):
                    found.append(f"{path}{k}={json.dumps(v)}")
                else:
                    walk(v, f"{path}{k}.")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}{i}.")

    for name in sorted(files):
        path = os.path.join(folder.path, os.path.splitext(name)[0] + ".json")
        if os.path.exists(path):
            with open(path) as f:
                walk(json.load(f), "")
            if found:
                return f"registers/occupancy: see the sidecar {os.path.basename(path)} ({'; '.join(found[:4])})"
    return "registers/occupancy: not recorded (bench_attention's sidecar has no such field)"


def attention_flash(folder):
    """The flash kernel's forward against our cuDNN row of the same shape (gpucal against gpucal)."""
    tid, t = "attention_flash_vs_cudnn", TARGET_BY_ID["attention_flash_vs_cudnn"]
    flash = [r for r in folder.ours if r["bench"] == "attention" and (a := parse(ATTENTION_KEY, r["point"]))
             and a["impl"] == "flash" and a["pass"] == "fwd" and int(a["d"]) == FLASH_HEAD_DIM
             and min(int(a["sq"]), int(a["skv"])) >= FLASH_MIN_SEQ]
    resources = sidecar_kernel_resources(folder, {r["_file"] for r in flash})
    if not flash:
        return result(tid, "not measured", why=f"no flash forward row at d={FLASH_HEAD_DIM}, s ≥ {FLASH_MIN_SEQ} "
                                              "(attention.csv)")
    values, missing = {}, []
    for r in flash:
        cudnn = folder.ours_ok.get(("attention", r["point"].replace("attention/flash/", "attention/cudnn/", 1)))
        if not is_ok(r) or cudnn is None:
            missing.append(f"{r['point']}: " + ("flash " + r.get("status", "") + " " + r.get("status_detail", "")
                                                if not is_ok(r) else "no ok cudnn row of the same shape"))
            continue
        tflops = number(r.get("tflops")) or (number(r.get("flops")) or 0) / number(r["time_us_median"]) / 1e6
        values[r["point"]] = (speed(r, cudnn), tflops)
    if not values:
        return result(tid, "not measured", why="; ".join(missing[:3]) + f"; {resources}")
    worst = min(values, key=lambda p: values[p][0])
    v, tflops = values[worst]
    text = f"min {v:.3f} at {worst} (flash {tflops:.1f} TFLOP/s there); {resources}"
    why = f"{len(missing)} shapes unmeasured: " + "; ".join(missing[:3]) if missing else ""
    verdict = "missed" if any(x < t.threshold for x, _ in values.values()) else "incomplete" if missing else "met"
    details = [{"point": p, "value": x, "flash_tflops": f} for p, (x, f) in sorted(values.items())]
    return result(tid, verdict, text, v, len(values), why, details)


def copies(folder, direction):
    """Per size >= 1 MiB: the torch copy's time / our faster engine's (ce or sm) time."""
    memory = "device" if direction == "d2d" else "pinned"
    tid = f"copy_{direction}" + ("" if direction == "d2d" else "_pinned")
    by_size = {}
    for r in folder.ours:
        c = parse(COPY_KEY, r["point"]) if r["bench"] == "p2p" else None
        if c and c["direction"] == direction and c["memory"] == memory:
            size = int(number(r.get("size_bytes")) or size_bytes(c["size"]))
            if size >= COPY_MIN_BYTES:
                by_size.setdefault(size, []).append(r["point"])
    mib = COPY_MIN_BYTES >> 20
    if not by_size:
        return result(tid, "not measured", why=f"no {direction} {memory} copy row of ≥ {mib} MiB (p2p_copy.csv)")

    def per_size(size):
        ours = [folder.ours_ok[("p2p", p)] for p in by_size[size] if ("p2p", p) in folder.ours_ok]
        theirs = [t for p in by_size[size] for t in folder.torch_ok("p2p", p, "")]
        if not ours or not theirs:
            return None
        best = min(ours, key=lambda r: number(r["time_us_median"]))
        torch_best = min(theirs, key=lambda t: number(t["time_us_median"]))
        engine = parse(COPY_KEY, best["point"])["engine"]
        return speed(best, torch_best), f" (ours: the {engine} engine)"

    sizes = {(f"{size >> 30} GiB" if size % (1 << 30) == 0 else f"{size / (1 << 20):g} MiB"): size
             for size in sorted(by_size)}

    def explain(missing):
        points = [p for label in missing for p in by_size[sizes[label]]]
        return folder.why_unmeasured("p2p", points, "Tensor.copy_")

    res = judge_minimum(tid, list(sizes), lambda label: per_size(sizes[label]), explain, "")
    res["why"] = "; ".join(x for x in (res["why"], f"sizes counted: ≥ {mib} MiB (smaller copies measure latency)") if x)
    return res


def collective_rows(folder):
    return [(r, c) for r in folder.ours if r["bench"] == "collectives" and (c := parse(COLLECTIVE_KEY, r["point"]))]


def collectives_floor(folder):
    tid = "collectives_latency_floor"
    rows = [(r, c) for r, c in collective_rows(folder) if c["nranks"] == "1" and is_ok(r)]
    if not rows:
        return result(tid, "not measured", why="no ok one-rank collectives row (collectives.csv)")
    groups = {}
    for r, c in rows:
        # Per placement: out of place NCCL copies send to receive even at one rank, in place it
        # does not, and torch.distributed's all_reduce/broadcast/reduce exist in place only.
        groups.setdefault(f"{c['collective']} {c['place']}" + (" graph" if c["graph"] else ""), []).append(r)
    parts, details = [], []
    for name, rs in sorted(groups.items()):
        size = min(int(number(r.get("size_bytes")) or size_bytes(parse(COLLECTIVE_KEY, r["point"])["size"])) for r in rs)
        at = [r for r in rs if int(number(r.get("size_bytes")) or size_bytes(parse(COLLECTIVE_KEY, r["point"])["size"])) == size]
        ours = min(at, key=lambda r: number(r["time_us_median"]))
        theirs = folder.torch_ok("collectives", ours["point"], "")
        torch_us = number(theirs[0]["time_us_median"]) if theirs else None
        ours_us = number(ours["time_us_median"])
        parts.append(f"{name} {size} B: ours {ours_us:.3g} µs, PyTorch "
                     + (f"{torch_us:.3g} µs (ours_vs_torch {torch_us / ours_us:.2f})" if torch_us else "not measured"))
        details.append({"collective": name, "size_bytes": size, "point": ours["point"], "ours_us": ours_us,
                        "torch_us": torch_us})
    return result(tid, "recorded", "; ".join(parts), None, len(groups), "", details)


def collectives_wrong(folder):
    tid = "collectives_wrong_zero"
    rows = [r for r, _ in collective_rows(folder)]
    if not rows:
        return result(tid, "not measured", why="no collectives row (collectives.csv)")
    skipped = [r for r in rows if r.get("status") == "skipped"]
    bad = [r for r in rows if r.get("status") != "skipped" and (
        r.get("status") != "ok" or r.get("verified") != "ok" or (number(r.get("wrong")) or 0) != 0)]
    checked = len(rows) - len(skipped)
    text = f"{len(bad)} of {checked} rows with wrong ≠ 0 or not verified ok" + (
        f" ({len(skipped)} skipped, not run)" if skipped else "")
    why = "; ".join(f"{r['point']}: status {r.get('status')}, verified {r.get('verified')}, wrong {r.get('wrong')}"
                    for r in bad[:3])
    verdict = "not measured" if not checked else "missed" if bad else "met"
    return result(tid, verdict, text, len(bad), checked, why or ("every row skipped" if not checked else ""),
                  [{"point": r["point"], "status": r.get("status"), "verified": r.get("verified"), "wrong": r.get("wrong")}
                   for r in bad])
