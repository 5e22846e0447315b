#!/usr/bin/env python3
"""PyTorch baseline for bench_attention: torch.nn.functional.scaled_dot_product_attention
with each backend PyTorch offers here (cuDNN, flash, memory-efficient), forward and
backward, on the shapes of gpucal rows, in the same regime.

  torch_attention.py --out torch_attention.csv --points-from attention.csv [--quick] [--time-budget S]

Each gpucal row (status ok; impl cudnn or flash) gets one torch row per SDPA backend, with
its `point` and torch_op "sdpa:<backend>": ours (cudnn and flash) against each of theirs.
Tensors are laid out as the row says (BSHD: [b, s, h, d] viewed as [b, h, s, d]); causal is
top-left, as in gpucal. fwd times the attention call; bwd times torch.autograd.grad of dQ,
dK, dV from a forward done outside the timer; fwdbwd times both. Without --points-from: the
llm set's 4096-token point, bf16, fwd and bwd.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import Budget, RowWriter, Timer, base_args, ok_rows, write_sidecar  # noqa: E402

SHAPE_COLUMNS = ["dtype", "pass", "layout", "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal",
                 "regime"]


def shape_key(r):
    return tuple(r[c] for c in SHAPE_COLUMNS)


def default_rows():
    rows = []
    for p in ("fwd", "bwd"):
        shape = {"dtype": "bf16", "pass": p, "layout": "BSHD", "batch": "4", "heads": "16", "kv_heads": "16",
                 "seq_q": "4096", "seq_kv": "4096", "head_dim": "128", "causal": "0", "regime": "cold"}
        rows.append({**shape, "point": "torch-default/" + "/".join(shape[c] for c in SHAPE_COLUMNS)})
    return rows


def main(argv=None):
    a = base_args(__doc__.split("\n")[1]).parse_args(argv)
    import torch  # noqa: PLC0415
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415

    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    rows = ok_rows(a.points_from, "attention") if a.points_from else default_rows()
    rows = [r for r in rows if r.get("impl", "cudnn") in ("cudnn", "flash")]
    timer, budget = Timer(torch, a.quick, max_time_s=a.max_time_per_point), Budget(a.time_budget)
    out = RowWriter(a.out, SHAPE_COLUMNS + ["ours_impl", "flops", "tflops"])
    done = {}
    for r in rows:
        key = shape_key(r)
        if key not in done:
            if budget.expired():
                print(f"time budget spent: {r['point']} and later points not measured")
                break
            done[key] = {name: measure(torch, sdpa_kernel, backend, timer, r) for name, backend in backends.items()}
        for name, result in done[key].items():
            row = {"bench": "attention", "point": r["point"], "torch_op": f"sdpa:{name}", "ours_impl": r.get("impl", ""),
                   **{c: r[c] for c in SHAPE_COLUMNS}, **result}
            if result.get("time_us_median") and r.get("flops"):
                row["flops"] = r["flops"]
                row["tflops"] = float(r["flops"]) / result["time_us_median"] / 1e6
            out.write(row)
    out.close()
    write_sidecar(a.out, "attention", torch, {"sdpa_backends": list(backends),
                                              "flop_convention": "the gpucal row's (flops column)"})
    print(f"torch_attention: {out.rows} rows, {len(done)} shapes -> {a.out}")
    return 0


def measure(torch, sdpa_kernel, backend, timer, r):
    import torch.nn.functional as F  # noqa: PLC0415

    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    if r["dtype"] not in dtypes:
        return {"status": "skipped", "detail": f"no torch dtype for {r['dtype']}"}
    b, h, hk = int(r["batch"]), int(r["heads"]), int(r["kv_heads"])
    sq, skv, d = int(r["seq_q"]), int(r["seq_kv"]), int(r["head_dim"])
    causal, pas = r["causal"] == "1", r["pass"]
    dt = dtypes[r["dtype"]]
    try:
        def make(heads, seq, grad):
            shape = (b, seq, heads, d) if r["layout"] == "BSHD" else (b, heads, seq, d)
            x = (torch.rand(shape, device="cuda", dtype=torch.float32) * 4 - 2).to(dt)
            x = x.transpose(1, 2) if r["layout"] == "BSHD" else x
            return x.requires_grad_(grad)

        grad = pas != "fwd"
        q, k, v = make(h, sq, grad), make(hk, skv, grad), make(hk, skv, grad)
        kwargs = {"is_causal": causal}
        if hk != h:
            kwargs["enable_gqa"] = True
        with sdpa_kernel(backend):
            if pas == "fwd":
                def fn():
                    return F.scaled_dot_product_attention(q, k, v, **kwargs)
            else:
                out = F.scaled_dot_product_attention(q, k, v, **kwargs)
                d_out = torch.rand_like(out) * 2 - 1

                if pas == "bwd":
                    def fn():
                        return torch.autograd.grad(out, (q, k, v), d_out, retain_graph=True)
                else:
                    def fn():
                        o = F.scaled_dot_product_attention(q, k, v, **kwargs)
                        return torch.autograd.grad(o, (q, k, v), d_out)
            stats = timer.measure(fn, r["regime"])
        return {"status": "ok", "detail": "", **stats}
    except (RuntimeError, TypeError) as e:  # this backend does not take this shape here
        torch.cuda.synchronize()
        return {"status": "skipped", "detail": str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__}
    finally:
        torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
