#!/usr/bin/env python3
"""PyTorch baselines for bench_memory: the PyTorch op a training step would call, on the
shapes of bench_memory's points, timed with CUDA events (torch_common.Timer, hot: back-to-back
launches, as bench_memory's default regime); one CSV row per point, keyed by the `point`
bench_memory writes for the same measurement, so that .ci/gpu-check can join the two CSVs on
(bench, point) and report the ratio.

    torch_memory.py --out FILE.csv --points-from memory.csv [--time-budget S]
                    [--max-time-per-point S] [--quick]
                                                    the ok rows of a bench_memory CSV
    torch_memory.py --out FILE.csv [--quick]        quick: set `quick`, else set `llm`
    torch_memory.py --list-points quick|llm         the keys, no torch needed
    torch_memory.py --check-points quick|llm --bench BENCH_MEMORY
                                                    keys against `bench_memory --list` (ctest)

--points-from: every ok bench_memory row gets one row. Measured: kernel, dtype and shape
read back from the point key (parse_point), impl gpucal or cudnn (both compared with the
same PyTorch measurement), regime hot. Skipped, with the reason in `detail`: fma_chain (no
PyTorch counterpart), other regimes and impls, keys this script cannot read; rows past
--time-budget (`time budget spent`). Points are measured interleaved across (kernel, dtype)
so that a run cut by its budget loses the largest shapes of every kernel, not the last
kernels. Without --points-from: every point of the set but fma_chain, impl gpucal.

Columns: torch_common.TORCH_COLUMNS, kernel, dtype, device, torch_version. Ops: copy
dst.copy_(src); scale torch.mul(out=); add torch.add(out=); triad torch.add(alpha=q, out=);
read Tensor.sum(dtype=float32); layernorm torch.native_layer_norm and
aten.native_layer_norm_backward; rmsnorm F.rms_norm and its autograd backward; softmax
torch.softmax and torch._softmax_backward_data; gelu F.gelu and aten.gelu_backward; SwiGLU
F.silu(a) * b and its autograd backward; residual add torch.add(out=); dropout + residual
r + torch.native_dropout(x, 0.1, True)[0]; cross-entropy F.cross_entropy (mean) and its
autograd backward; AdamW torch.optim.AdamW(fused=True).step(). PyTorch runs these eagerly,
unfused where it has no fused kernel (SwiGLU: two kernels; cross-entropy: log_softmax then
nll_loss, the whole log-probability matrix written): that is the cost the ratio compares.
Timing: warm-up, then samples of back-to-back launches of >= 200 us each between two CUDA
events, until 10 samples and --max-time-per-point (default 1.0 s, --quick 0.2 s); per-launch
median, p10, p90 over the samples.

The shapes mirror bench_memory/memory_sets.cpp; ctest checks the keys against `--list`.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import (BUDGET_SPENT, Budget, RowWriter, Timer, base_args, group_jobs, interleave,  # noqa: E402
                          ok_rows, run_jobs, unique_points, write_sidecar)

STREAM = ["copy", "scale", "add", "triad", "read"]
LAYER = ["layernorm_fwd", "layernorm_bwd", "rmsnorm_fwd", "rmsnorm_bwd", "residual_add", "dropout_residual_add"]
KERNEL_ORDER = STREAM + ["fma_chain", "layernorm_fwd", "layernorm_bwd", "rmsnorm_fwd", "rmsnorm_bwd", "softmax_fwd",
                         "softmax_bwd", "gelu_fwd", "gelu_bwd", "swiglu_fwd", "swiglu_bwd", "residual_add",
                         "dropout_residual_add", "cross_entropy_fwd", "cross_entropy_bwd", "adamw_step"]
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
Q = 3.0  # STREAM's scalar, as bench_memory
NORM_EPS, DROPOUT_P = 1e-5, 0.1
ADAMW = dict(lr=0.02, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)


def format_size(n):
    """core/driver/sweep.cpp's format_size: 4096 -> '4K', 1000 -> '1000'."""
    suffixes = ["", "K", "M", "G", "T"]
    i = 0
    while i < 4 and n != 0 and n % 1024 == 0:
        n //= 1024
        i += 1
    return "%d%s" % (n, suffixes[i])


SIZE_SUFFIXES = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}


def parse_size(text):
    """format_size's inverse: '4K' -> 4096, '1000' -> 1000; None if not such a size."""
    m = re.fullmatch(r"([0-9]+)([KMGT]?)", text)
    return int(m.group(1)) << (10 * SIZE_SUFFIXES[m.group(2)]) if m else None


def swiglu_ffn(hidden):
    return (8 * hidden // 3 + 255) // 256 * 256


def set_shapes(name):
    """(kernel, shape) in memory_sets.cpp's order; shape: stream bytes per array, fma elements,
    (rows, cols), or a parameter count."""
    out = []

    def stream(sizes):
        for k in STREAM:
            out.extend((k, ("bytes", b)) for b in sizes)

    def layer(tokens, hidden):
        out.extend((k, ("rc", tokens, hidden)) for k in LAYER)
        out.extend((k, ("rc", tokens, 4 * hidden)) for k in ("gelu_fwd", "gelu_bwd"))
        out.extend((k, ("rc", tokens, swiglu_ffn(hidden))) for k in ("swiglu_fwd", "swiglu_bwd"))

    def rows(kernels, r, c):
        out.extend((k, ("rc", r, c)) for k in kernels)

    if name == "llm":
        stream([4096 << i for i in range(19)])  # 4 KiB .. 1 GiB
        out.append(("fma_chain", ("n", 1 << 24)))
        for hidden in (4096, 8192):
            for tokens in (4096, 16384):
                layer(tokens, hidden)
        for hidden in (4096, 8192):
            for seq in (2048, 4096):
                rows(("softmax_fwd", "softmax_bwd"), 4096 * (hidden // 128), seq)
        for tokens in (4096, 16384):
            for vocab in (32000, 128256):
                rows(("cross_entropy_fwd", "cross_entropy_bwd"), tokens, vocab)
        out.extend(("adamw_step", ("p", p)) for p in (1 << 26, 1 << 28))
    elif name == "quick":
        stream([4 << 20, 256 << 20])
        out.append(("fma_chain", ("n", 1 << 24)))
        layer(4096, 4096)
        rows(("softmax_fwd", "softmax_bwd"), 4096 * 32, 2048)
        rows(("cross_entropy_fwd", "cross_entropy_bwd"), 4096, 32000)
        out.append(("adamw_step", ("p", 1 << 26)))
    else:
        raise SystemExit("torch_memory.py: unknown set '%s' (expected llm or quick)" % name)
    return out


def point_key(kernel, dtype, shape, impl="gpucal", regime="hot"):
    """bench_memory's MemoryPoint::key."""
    if shape[0] == "bytes":
        part = format_size(shape[1])
    elif shape[0] == "n":
        part = "n" + format_size(shape[1])
    elif shape[0] == "p":
        part = "p%d" % shape[1]
    else:
        part = "r%d/c%d" % (shape[1], shape[2])
    return "memory/%s/%s/%s/%s/%s" % (impl, kernel, dtype, part, regime)


def parse_point(key):
    """(impl, kernel, dtype, shape, regime) of a bench_memory point key, or None where this
    script does not know the kernel or the key is not one point_key writes."""
    parts = key.split("/")
    if len(parts) < 6 or parts[0] != "memory" or parts[2] not in KERNEL_ORDER:
        return None
    impl, kernel, dtype, regime = parts[1], parts[2], parts[3], parts[-1]
    shape_parts = parts[4:-1]
    shape = None
    if kernel in STREAM and len(shape_parts) == 1 and parse_size(shape_parts[0]):
        shape = ("bytes", parse_size(shape_parts[0]))
    elif kernel == "fma_chain" and len(shape_parts) == 1 and shape_parts[0].startswith("n"):
        shape = ("n", parse_size(shape_parts[0][1:]))
    elif kernel == "adamw_step" and len(shape_parts) == 1 and re.fullmatch(r"p[0-9]+", shape_parts[0]):
        shape = ("p", int(shape_parts[0][1:]))
    elif len(shape_parts) == 2 and re.fullmatch(r"r[0-9]+", shape_parts[0]) and re.fullmatch(r"c[0-9]+",
                                                                                           shape_parts[1]):
        shape = ("rc", int(shape_parts[0][1:]), int(shape_parts[1][1:]))
    if shape is None or None in shape or point_key(kernel, dtype, shape, impl, regime) != key:
        return None
    return impl, kernel, dtype, shape, regime


MEASURED_IMPLS = ("gpucal", "cudnn")  # our GPU kernels and cuDNN's, against the same PyTorch op


def classify(row):
    """(measurement key (kernel, dtype, shape), None) for an ok bench_memory row this script
    measures, or (key, skipped result) with the reason it does not."""
    parsed = parse_point(row["point"])
    if parsed is None:
        return ("?", row["point"]), skip_result("not a bench_memory point key this script can read")
    impl, kernel, dtype, shape, regime = parsed
    key = (kernel, dtype, shape)
    if kernel == "fma_chain":
        return key, skip_result("fma_chain has no PyTorch counterpart")
    if impl not in MEASURED_IMPLS:
        return key, skip_result(f"impl {impl}: the PyTorch baseline runs on a GPU against {', '.join(MEASURED_IMPLS)}")
    if regime != "hot":
        return key, skip_result(f"regime {regime}: the PyTorch baseline times back-to-back launches (hot) only")
    if dtype not in ELEMENT_BYTES:
        return key, skip_result(f"dtype {dtype} not measured")
    return key, None


def skip_result(why):
    return {"torch_op": "", "status": "skipped", "detail": why}


def plan_jobs(rows):
    """Jobs in measurement order: one per (kernel, dtype, shape), interleaved across
    (kernel, dtype) so that a cut loses every kernel's tail (its largest shapes)."""
    return interleave(group_jobs(unique_points(rows), classify), lambda job: job.key[:2])


def points(name):
    """Every point of the set bench_memory runs with --dtype auto, in its order: kernel-major,
    then dtype, then shape. Yields (key, kernel, dtype, shape)."""
    shapes = set_shapes(name)
    for kernel in KERNEL_ORDER:
        dtypes = ["fp32", "fp16", "bf16"] if kernel == "fma_chain" else ["fp32", "bf16"]
        for dtype in dtypes:
            for k, shape in shapes:
                if k == kernel:
                    yield point_key(kernel, dtype, shape), kernel, dtype, shape


def torch_points(name):
    return [p for p in points(name) if p[1] != "fma_chain"]  # no PyTorch counterpart


def check_points(name, bench):
    proc = subprocess.run([bench, "--backend", "cuda", "--impl", "gpucal", "--set", name, "--list"],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        sys.exit("FAIL: bench_memory --list exited %d: %s" % (proc.returncode, proc.stderr.strip()))
    listed = [l.split()[0] for l in proc.stdout.splitlines() if l and not l.startswith("#")]
    ours = [p[0] for p in points(name)]
    if ours != listed:
        missing = sorted(set(listed) - set(ours))[:5]
        extra = sorted(set(ours) - set(listed))[:5]
        sys.exit("FAIL: %s: %d keys here, %d from bench_memory; missing here %s, unknown to the bench %s"
                 % (name, len(ours), len(listed), missing, extra))
    lacking = {p[1] for p in points(name)} - {p[1] for p in torch_points(name)}
    if lacking != {"fma_chain"}:
        sys.exit("FAIL: kernels without a PyTorch row: %s" % sorted(lacking))
    print("OK: %d bench_memory points, %d with a PyTorch baseline" % (len(listed), len(torch_points(name))))


# ------------------------------------------------------------------------ timing (needs torch)

def make_case(torch, kernel, dtype, shape, dev="cuda"):
    """Returns (torch_op, launch) with every tensor allocated and filled (only those the
    kernel uses: the largest cross-entropy point holds 8.4 GB of fp32 logits)."""
    F = torch.nn.functional
    dt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]

    def rand(*size, lo=-1.0, hi=1.0):
        return torch.empty(*size, dtype=dt, device=dev).uniform_(lo, hi)

    if shape[0] == "bytes":
        n = shape[1] // ELEMENT_BYTES[dtype]
        a, b, c = rand(n), rand(n), rand(n)
        if kernel == "copy":
            return "Tensor.copy_", lambda: c.copy_(a)
        if kernel == "scale":
            return "torch.mul(out=)", lambda: torch.mul(c, Q, out=b)
        if kernel == "add":
            return "torch.add(out=)", lambda: torch.add(a, b, out=c)
        if kernel == "triad":
            return "torch.add(alpha=q, out=)", lambda: torch.add(b, c, alpha=Q, out=a)
        return "Tensor.sum(dtype=float32)", lambda: a.sum(dtype=torch.float32)
    if shape[0] == "p":
        p = torch.nn.Parameter(rand(shape[1]))
        p.grad = rand(shape[1])
        opt = torch.optim.AdamW([p], fused=True, **ADAMW)
        return "torch.optim.AdamW(fused=True).step", opt.step
    R, C = shape[1], shape[2]
    if kernel.startswith("cross_entropy"):
        logits = rand(R, C, lo=-4, hi=4)
        target = torch.randint(0, C, (R,), device=dev)
        if kernel == "cross_entropy_fwd":
            return "F.cross_entropy", lambda: F.cross_entropy(logits, target)
        logits.requires_grad_()
        loss = F.cross_entropy(logits, target)
        return "F.cross_entropy backward (autograd)", lambda: torch.autograd.grad(loss, logits, retain_graph=True)
    if kernel in ("softmax_fwd", "gelu_fwd"):
        xs = rand(R, C, lo=-4, hi=4)
        if kernel == "softmax_fwd":
            return "torch.softmax", lambda: torch.softmax(xs, -1)
        return "F.gelu", lambda: F.gelu(xs)
    x, dy = rand(R, C), rand(R, C)
    if kernel == "softmax_bwd":
        y = torch.softmax(rand(R, C, lo=-4, hi=4), -1)
        return "torch._softmax_backward_data", lambda: torch._softmax_backward_data(dy, y, -1, dt)
    if kernel == "gelu_bwd":
        xs = rand(R, C, lo=-4, hi=4)
        return "aten.gelu_backward", lambda: torch.ops.aten.gelu_backward(dy, xs)
    if kernel == "swiglu_fwd":
        g = rand(R, C, lo=-4, hi=4)
        return "F.silu(a) * b", lambda: F.silu(g) * x
    if kernel == "swiglu_bwd":
        g, u = rand(R, C, lo=-4, hi=4).requires_grad_(), x.requires_grad_()
        y = F.silu(g) * u
        return "F.silu(a) * b backward (autograd)", lambda: torch.autograd.grad(y, (g, u), dy, retain_graph=True)
    if kernel == "residual_add":
        out = torch.empty_like(x)
        return "torch.add(out=)", lambda: torch.add(x, dy, out=out)
    if kernel == "dropout_residual_add":
        return "r + torch.native_dropout", lambda: torch.add(dy, torch.native_dropout(x, DROPOUT_P, True)[0])
    gamma, beta = rand(C, lo=0.5, hi=1.5), rand(C)
    if kernel == "layernorm_fwd":
        return "torch.native_layer_norm", lambda: torch.native_layer_norm(x, [C], gamma, beta, NORM_EPS)
    if kernel == "layernorm_bwd":
        _, mean, rstd = torch.native_layer_norm(x, [C], gamma, beta, NORM_EPS)
        return "aten.native_layer_norm_backward", lambda: torch.ops.aten.native_layer_norm_backward(
            dy, x, [C], mean, rstd, gamma, beta, [True, True, True])
    if kernel == "rmsnorm_fwd":
        return "F.rms_norm", lambda: F.rms_norm(x, [C], gamma, NORM_EPS)
    xg, gg = x.requires_grad_(), gamma.requires_grad_()
    y = F.rms_norm(xg, [C], gg, NORM_EPS)
    return "F.rms_norm backward (autograd)", lambda: torch.autograd.grad(y, (xg, gg), dy, retain_graph=True)


def measure(torch, timer, key, dev="cuda"):
    kernel, dtype, shape = key
    op, launch = "", None
    try:
        op, launch = make_case(torch, kernel, dtype, shape, dev)
        return {"torch_op": op, "status": "ok", "detail": "", **timer.measure(launch, "hot")}
    except (RuntimeError, TypeError, AttributeError, NotImplementedError) as e:  # out of memory, an op this torch lacks
        oom = "out of memory" in str(e).lower()
        detail = "out of device memory" if oom else str(e).strip().splitlines()[0][:200] if str(e).strip() else repr(e)
        return {"torch_op": op, "status": "skipped", "detail": detail}
    finally:
        del launch
        if dev == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()


def default_rows(name):
    return [{"bench": "memory", "point": key, "status": "ok"} for key, *_ in torch_points(name)]


def run(a):
    budget = Budget(a.time_budget)  # the import and CUDA's start count
    import torch  # noqa: PLC0415
    if a.device == "cuda" and not torch.cuda.is_available():
        print("torch_memory.py: no CUDA device for torch", file=sys.stderr)
        return 77
    rows = ok_rows(a.points_from, "memory") if a.points_from else default_rows("quick" if a.quick else "llm")
    timer = Timer(torch, a.quick, a.device, a.max_time_per_point if a.max_time_per_point is not None
                  else 0.2 if a.quick else 1.0)
    device = torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu"
    out = RowWriter(a.out, ["kernel", "dtype", "device", "torch_version"])

    def write(r, result):
        parsed = parse_point(r["point"])
        out.write({"bench": "memory", "point": r["point"], "kernel": parsed[1] if parsed else "",
                   "dtype": parsed[2] if parsed else "", "device": device, "torch_version": torch.__version__,
                   **result})

    try:
        measured, spent = run_jobs(plan_jobs(rows), lambda key: measure(torch, timer, key, a.device), write, budget)
    finally:
        out.close()
    write_sidecar(a.out, "memory", torch, {"max_time_per_point_s": timer.max_time_s})
    print(f"torch_memory: {out.rows} rows, {measured} points measured, {spent} skipped ({BUDGET_SPENT}) -> {a.out}")
    return 0


def main(argv=None):
    ap = base_args(__doc__.split("\n")[0], out_required=False)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: a smoke run of the plumbing without a GPU (host clock; ops the CPU lacks are skipped)")
    ap.add_argument("--list-points", metavar="SET")
    ap.add_argument("--check-points", metavar="SET")
    ap.add_argument("--bench", help="bench_memory binary for --check-points")
    a = ap.parse_args(argv)
    if a.list_points:
        for key, *_ in torch_points(a.list_points):
            print(key)
    elif a.check_points:
        if not a.bench:
            ap.error("--check-points needs --bench")
        check_points(a.check_points, a.bench)
    elif a.out:
        return run(a)
    else:
        ap.error("give --out FILE.csv (or --list-points / --check-points)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
