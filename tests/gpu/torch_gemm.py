#!/usr/bin/env python3
"""PyTorch baseline for bench_gemm: torch.matmul (fp16, bf16, fp32) and torch._scaled_mm
(fp8 e4m3, per-tensor scales) on the shapes of gpucal rows, in the same regime.

  torch_gemm.py --out torch_gemm.csv --points-from gemm_bf16.csv [...] [--quick] [--time-budget S]

Each gpucal row (status ok) gets one torch row with its `point`; rows of the same shape
(heuristic and autotuned points) share one measurement. gpucal's column-major
D[m x n] = op(A) op(B) is computed as the row-major D^T[n x m] = op(B)^T op(A)^T, so
cuBLAS sees the same m, n, k and transposes (TN: torch.matmul(B[n,k], A[m,k].t())). fp8
runs TN only (torch._scaled_mm wants its second operand column-major). Without
--points-from: 4096^3 and 8192^3 in bf16, keyed like gpucal's cold TN rows. Checked without
a GPU (PyTorch 1.13, CPU, --device cpu, points from host-backend rows): the rows join.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import Budget, RowWriter, Timer, base_args, ok_rows, write_sidecar  # noqa: E402

DEFAULT_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]


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


def main(argv=None):
    ap = base_args(__doc__.split("\n")[1])
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: a smoke run of the plumbing without a GPU (fp32 rows, host clock, no flush)")
    a = ap.parse_args(argv)
    import torch  # noqa: PLC0415 (only where it is needed: --help works without torch)

    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "tf32": torch.float32}
    if hasattr(torch, "float8_e4m3fn"):
        dtypes["fp8_e4m3"] = torch.float8_e4m3fn
    rows = ok_rows(a.points_from, "gemm") if a.points_from else [
        {"point": gemm_point("bf16", "TN", m, n, k), "dtype": "bf16", "out_dtype": "bf16", "layout": "TN",
         "m": m, "n": n, "k": k, "batch": 1, "regime": "cold"} for m, n, k in DEFAULT_SHAPES]
    timer, budget = Timer(torch, a.quick, a.device), Budget(a.time_budget)
    out = RowWriter(a.out, ["dtype", "out_dtype", "layout", "m", "n", "k", "batch", "regime", "tflops"])
    done = {}
    for r in rows:
        key = shape_key(r)
        dtype, out_dtype, layout, m, n, k, batch, regime = key
        base = {"bench": "gemm", "point": r["point"], "dtype": dtype, "out_dtype": out_dtype, "layout": layout,
                "m": m, "n": n, "k": k, "batch": batch, "regime": regime}
        if key not in done:
            if budget.expired():
                print(f"time budget spent: {r['point']} and later points not measured")
                break
            done[key] = measure(torch, timer, dtypes, key, a.device)
        result = dict(done[key])
        if result.get("time_us_median"):
            result["tflops"] = 2.0 * m * n * k * batch / result["time_us_median"] / 1e6
        out.write({**base, **result})
    out.close()
    write_sidecar(a.out, "gemm", torch, {"matmul_precision": torch.get_float32_matmul_precision()})
    print(f"torch_gemm: {out.rows} rows, {len(done)} shapes measured -> {a.out}")
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

            def fn():
                return torch._scaled_mm(lhs, rhs, scale_a=one, scale_b=one, out_dtype=out_t)
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
