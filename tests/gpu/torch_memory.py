#!/usr/bin/env python3
"""PyTorch baselines for bench_memory: the PyTorch op a training step would call, on the
shapes of bench_memory's named sets, timed with CUDA events; one CSV row per point, keyed by
the `point` bench_memory writes for the same measurement (impl gpucal, regime hot), so that
.ci/gpu-check can join the two CSVs on (bench, point) and report the ratio.

    torch_memory.py --out FILE.csv [--quick]        quick: set `quick`, else set `llm`
    torch_memory.py --list-points quick|llm         the keys, no torch needed
    torch_memory.py --check-points quick|llm --bench BENCH_MEMORY
                                                    keys against `bench_memory --list` (ctest)

Columns: bench,point,torch_op,dtype,time_us_median,time_us_p10,time_us_p90,samples,device,
torch_version. Ops: copy dst.copy_(src); scale torch.mul(out=); add torch.add(out=); triad
torch.add(alpha=q, out=); read Tensor.sum(dtype=float32); layernorm torch.native_layer_norm
and aten.native_layer_norm_backward; rmsnorm F.rms_norm and its autograd backward; softmax
torch.softmax and torch._softmax_backward_data; gelu F.gelu and aten.gelu_backward; SwiGLU
F.silu(a) * b and its autograd backward; residual add torch.add(out=); dropout + residual
r + torch.native_dropout(x, 0.1, True)[0]; cross-entropy F.cross_entropy (mean) and its
autograd backward; AdamW torch.optim.AdamW(fused=True).step(). fma_chain has no PyTorch
counterpart and no row. Timing: warm-up, then samples of back-to-back launches of at least
100 us each between two CUDA events (as bench_memory's hot regime), until 10 samples and the
time cap; per-launch median, p10, p90 over the samples.

The shapes mirror bench_memory/memory_sets.cpp; ctest checks the keys against `--list`.
"""
import argparse
import csv
import subprocess
import sys
import time

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
    """harness/sweep.cpp's format_size: 4096 -> '4K', 1000 -> '1000'."""
    suffixes = ["", "K", "M", "G", "T"]
    i = 0
    while i < 4 and n != 0 and n % 1024 == 0:
        n //= 1024
        i += 1
    return "%d%s" % (n, suffixes[i])


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

def make_case(torch, kernel, dtype, shape):
    """Returns (torch_op, launch) with every tensor allocated and filled."""
    F = torch.nn.functional
    dt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    dev = "cuda"

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
    x, dy = rand(R, C), rand(R, C)
    gamma, beta = rand(C, lo=0.5, hi=1.5), rand(C)
    if kernel == "layernorm_fwd":
        return "torch.native_layer_norm", lambda: torch.native_layer_norm(x, [C], gamma, beta, NORM_EPS)
    if kernel == "layernorm_bwd":
        _, mean, rstd = torch.native_layer_norm(x, [C], gamma, beta, NORM_EPS)
        return "aten.native_layer_norm_backward", lambda: torch.ops.aten.native_layer_norm_backward(
            dy, x, [C], mean, rstd, gamma, beta, [True, True, True])
    if kernel == "rmsnorm_fwd":
        return "F.rms_norm", lambda: F.rms_norm(x, [C], gamma, NORM_EPS)
    if kernel == "rmsnorm_bwd":
        xg, gg = x.clone().requires_grad_(), gamma.clone().requires_grad_()
        y = F.rms_norm(xg, [C], gg, NORM_EPS)
        return "F.rms_norm backward (autograd)", lambda: torch.autograd.grad(y, (xg, gg), dy, retain_graph=True)
    if kernel == "softmax_fwd":
        xs = rand(R, C, lo=-4, hi=4)
        return "torch.softmax", lambda: torch.softmax(xs, -1)
    if kernel == "softmax_bwd":
        y = torch.softmax(rand(R, C, lo=-4, hi=4), -1)
        return "torch._softmax_backward_data", lambda: torch._softmax_backward_data(dy, y, -1, dt)
    if kernel in ("gelu_fwd", "gelu_bwd"):
        xs = rand(R, C, lo=-4, hi=4)
        if kernel == "gelu_fwd":
            return "F.gelu", lambda: F.gelu(xs)
        return "aten.gelu_backward", lambda: torch.ops.aten.gelu_backward(dy, xs)
    if kernel == "swiglu_fwd":
        g = rand(R, C, lo=-4, hi=4)
        return "F.silu(a) * b", lambda: F.silu(g) * x
    if kernel == "swiglu_bwd":
        g, u = rand(R, C, lo=-4, hi=4).requires_grad_(), x.clone().requires_grad_()
        y = F.silu(g) * u
        return "F.silu(a) * b backward (autograd)", lambda: torch.autograd.grad(y, (g, u), dy, retain_graph=True)
    if kernel == "residual_add":
        out = torch.empty_like(x)
        return "torch.add(out=)", lambda: torch.add(x, dy, out=out)
    if kernel == "dropout_residual_add":
        return "r + torch.native_dropout", lambda: torch.add(dy, torch.native_dropout(x, DROPOUT_P, True)[0])
    logits = rand(R, C, lo=-4, hi=4)
    target = torch.randint(0, C, (R,), device=dev)
    if kernel == "cross_entropy_fwd":
        return "F.cross_entropy", lambda: F.cross_entropy(logits, target)
    lg = logits.clone().requires_grad_()
    loss = F.cross_entropy(lg, target)
    return "F.cross_entropy backward (autograd)", lambda: torch.autograd.grad(loss, lg, retain_graph=True)


def time_launches(torch, launch, max_time_s, min_samples=10, min_sample_s=100e-6):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(count):
        start.record()
        for _ in range(count):
            launch()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e-3

    launch()
    torch.cuda.synchronize()
    single = min(timed(1) for _ in range(3))
    batch = max(1, int(min_sample_s / single) + 1) if single < min_sample_s else 1
    samples = []
    t0 = time.monotonic()
    while len(samples) < min_samples or time.monotonic() - t0 < max_time_s:
        samples.append(timed(batch) / batch)
    samples.sort()

    def pct(q):
        pos = q * (len(samples) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(samples) - 1)
        return samples[lo] + (samples[hi] - samples[lo]) * (pos - lo)

    return pct(0.5) * 1e6, pct(0.1) * 1e6, pct(0.9) * 1e6, len(samples)


def run(out_path, quick):
    import torch
    if not torch.cuda.is_available():
        print("torch_memory.py: no CUDA device for torch", file=sys.stderr)
        sys.exit(77)
    name = "quick" if quick else "llm"
    device = torch.cuda.get_device_name(0)
    columns = ["bench", "point", "torch_op", "dtype", "time_us_median", "time_us_p10", "time_us_p90", "samples",
               "device", "torch_version"]
    with open(out_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for key, kernel, dtype, shape in torch_points(name):
            try:
                op, launch = make_case(torch, kernel, dtype, shape)
                med, p10, p90, n = time_launches(torch, launch, 0.2 if quick else 1.0)
            except torch.cuda.OutOfMemoryError:
                print("skip %s: out of device memory" % key, file=sys.stderr)
                torch.cuda.empty_cache()
                continue
            w.writerow({"bench": "memory", "point": key, "torch_op": op, "dtype": dtype, "time_us_median": "%.7g" % med,
                        "time_us_p10": "%.7g" % p10, "time_us_p90": "%.7g" % p90, "samples": n, "device": device,
                        "torch_version": torch.__version__})
            f.flush()
            del launch
            torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="CSV to write")
    ap.add_argument("--quick", action="store_true", help="set quick instead of llm")
    ap.add_argument("--list-points", metavar="SET")
    ap.add_argument("--check-points", metavar="SET")
    ap.add_argument("--bench", help="bench_memory binary for --check-points")
    a = ap.parse_args()
    if a.list_points:
        for key, *_ in torch_points(a.list_points):
            print(key)
    elif a.check_points:
        if not a.bench:
            ap.error("--check-points needs --bench")
        check_points(a.check_points, a.bench)
    elif a.out:
        run(a.out, a.quick)
    else:
        ap.error("give --out FILE.csv (or --list-points / --check-points)")


if __name__ == "__main__":
    main()
