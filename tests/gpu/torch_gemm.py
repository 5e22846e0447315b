#!/usr/bin/env python3
"""PyTorch baseline for bench_gemm: torch.matmul (fp16, bf16, fp32) and torch._scaled_mm
(fp8 e4m3, per-tensor scales) on the shapes of gpucal rows, in the same regime.

  torch_gemm.py --out torch_gemm.csv --points-from gemm_bf16.csv [...] [--quick] [--time-budget S]
                [--max-time-per-point S]

Each gpucal point (status ok) gets one torch row with its `point`; rows of the same shape
(heuristic and autotuned points) share one measurement. Shapes are measured 4096^3 and
8192^3 of every dtype first, then the others interleaved across dtypes (plan_jobs); shapes
past --time-budget get rows `skipped`, detail `time budget spent`. Rows are written in
measurement order. gpucal's column-major D[m x n] = op(A) op(B) is computed as the
row-major D^T[n x m] = op(B)^T op(A)^T, so cuBLAS sees the same m, n, k and transposes
(TN: torch.matmul(B[n,k], A[m,k].t())). fp8 runs TN only (torch._scaled_mm wants its
second operand column-major), without fast accumulation, as bench_gemm. Without
--points-from: 4096^3 and 8192^3 in bf16, keyed like gpucal's cold TN rows. Checked without
a GPU (PyTorch 1.13, CPU, --device cpu, points from host-backend rows): the rows join.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import (BUDGET_SPENT, Budget, RowWriter, Timer, base_args, group_jobs, interleave,  # noqa: E402
                          ok_rows, run_jobs, unique_points, write_sidecar)

SQUARES = (4096, 8192)
DEFAULT_SHAPES = [(s, s, s) for s in SQUARES]


def gemm_point(dtype, layout, m, n, k, batch=1, regime="cold", impl="cublaslt"):
    """gpucal's point key of a default GEMM row (bench_gemm/gemm_problem.cpp)."""
    return f"gemm/{impl}/{dtype}/{layout}/m{m}/n{n}/k{k}/b{batch}/{regime}"


def shape_key(r):
    return (r["dtype"], r.get("out_dtype", ""), r["layout"], int(r["m"]), int(r["n"]), int(r["k"]),
            int(r.get("batch") or 1), r.get("regime", "cold"))


def operands(torch, make, m, n, k, batch, layout):
    """(lhs [n,k], rhs [k,m]) whose product is gpucal's D stored column-major."""
    ta, tb = layout[0] == "T", layout[1] == "T"
    lead = (batch,) if batch > 1 else ()
    a = make(lead + ((m, k) if ta else (k, m)))
    b = make(lead + ((k, n) if tb else (n, k)))
    lhs = b.transpose(-1, -2) if tb else b
    rhs = a.transpose(-1, -2) if ta else a
    return lhs, rhs


def is_square(key):
    """One of the issue's headline shapes: m = n = k in SQUARES (4096^3, 8192^3)."""
    m, n, k = key[3:6]
    return m == n == k and m in SQUARES


def plan_jobs(rows):
    """Jobs in measurement order: one per shape (rows of one point once; heuristic and
    autotuned points of a shape share it), the squares of every dtype first, then the other
    shapes interleaved across dtypes, so a run cut by its budget loses a uniform tail."""
    jobs = group_jobs(unique_points(rows), lambda r: (shape_key(r), None))
    by_dtype = lambda job: job.key[:2]  # noqa: E731 (dtype, out_dtype)
    return (interleave([j for j in jobs if is_square(j.key)], by_dtype)
            + interleave([j for j in jobs if not is_square(j.key)], by_dtype))


def main(argv=None):
    ap = base_args(__doc__.split("\n")[1])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: a smoke run of the plumbing without a GPU (fp32 rows, host clock, no flush)")
    a = ap.parse_args(argv)
    budget = Budget(a.time_budget)  # the import and CUDA's start count
    import torch  # noqa: PLC0415 (only where it is needed: --help works without torch)

    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32}
    if hasattr(torch, "float8_e4m3fn"):
        dtypes["fp8_e4m3"] = torch.float8_e4m3fn
    rows = ok_rows(a.points_from, "gemm") if a.points_from else [
        {"point": gemm_point("bf16", "TN", m, n, k), "dtype": "bf16", "out_dtype": "bf16", "layout": "TN",
         "m": m, "n": n, "k": k, "batch": 1, "regime": "cold"} for m, n, k in DEFAULT_SHAPES]
    timer = Timer(torch, a.quick, a.device, a.max_time_per_point)
    out = RowWriter(a.out, ["dtype", "out_dtype", "layout", "m", "n", "k", "batch", "regime", "tflops"])

    def write(r, result):
        dtype, out_dtype, layout, m, n, k, batch, regime = shape_key(r)
        row = {"bench": "gemm", "point": r["point"], "dtype": dtype, "out_dtype": out_dtype, "layout": layout,
               "m": m, "n": n, "k": k, "batch": batch, "regime": regime, **result}
        if result.get("time_us_median"):
            row["tflops"] = 2.0 * m * n * k * batch / result["time_us_median"] / 1e6
        out.write(row)

    try:
        measured, spent = run_jobs(plan_jobs(rows), lambda key: measure(torch, timer, dtypes, key, a.device), write,
                                   budget)
    finally:
        out.close()
    write_sidecar(a.out, "gemm", torch, {"matmul_precision": torch.get_float32_matmul_precision(),
                                         "max_time_per_point_s": timer.max_time_s})
    print(f"torch_gemm: {out.rows} rows, {measured} shapes measured, {spent} rows skipped ({BUDGET_SPENT}) -> {a.out}")
    return 0


def measure(torch, timer, dtypes, key, device="cuda"):
    dtype, out_dtype, layout, m, n, k, batch, regime = key
    if dtype not in dtypes:
        return {"torch_op": "", "status": "skipped", "detail": f"no torch dtype for {dtype}"}
    fp8 = dtype.startswith("fp8")
    op = "torch._scaled_mm" if fp8 else "torch.matmul"
    if fp8 and (layout != "TN" or batch != 1):
        return {"torch_op": op, "status": "skipped", "detail": "torch._scaled_mm: TN, batch 1 only"}
    try:
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        gen = torch.Generator(device=device).manual_seed(1234)

        def make(shape):
            x = torch.rand(shape, device=device, generator=gen, dtype=torch.float32) * 2 - 1
            return x.to(dtypes[dtype])

        lhs, rhs = operands(torch, make, m, n, k, batch, layout)
        if fp8:
            out_t = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}.get(out_dtype or "bf16",
                                                                                              torch.bfloat16)
            one = torch.ones((), device=device, dtype=torch.float32)

            def fn():  # no fast accumulation: bench_gemm sets no CUBLASLT_MATMUL_DESC_FAST_ACCUM either
                return torch._scaled_mm(lhs, rhs, scale_a=one, scale_b=one, out_dtype=out_t, use_fast_accum=False)
        else:
            def fn():
                return torch.matmul(lhs, rhs)
        stats = timer.measure(fn, regime)
        del lhs, rhs
        return {"torch_op": op, "status": "ok", "detail": "", **stats}
    except (RuntimeError, TypeError, AttributeError) as e:  # an unsupported combination on this GPU / torch
        if device == "cuda":
            torch.cuda.synchronize()
        return {"torch_op": op, "status": "skipped", "detail": str(e).splitlines()[0][:200]}
    finally:
        if device == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
