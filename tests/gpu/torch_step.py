#!/usr/bin/env python3
"""PyTorch version of the step bench_step runs: one Llama-style training step on one GPU (TP = 1),
written the way a PyTorch user would (nn.Linear, F.rms_norm, F.scaled_dot_product_attention with
is_causal, SwiGLU, F.cross_entropy, torch.optim.AdamW(fused=True)), timed forward + backward +
optimizer step with CUDA events in gpucal's regimes; one CSV row per bench_step row, keyed by its
`point`, so .ci/gpu-check's ratio maker joins them on (bench, point) and `gpucal predict`'s figure
can be compared with PyTorch's: predicted / PyTorch = predicted_s / this row's median.

    torch_step.py --out FILE.csv [--quick] --points-from RESULTS/step.csv

The model of each row comes from bench_step's sidecar (step.json `model.model`, `model.layout`,
`model.facts`): hidden, heads, kv_heads, head_dim, ffn, vocab, layers (after --scale and
--layers), seq, micro_batch and dtype. Rows with tp, pp, cp or ep > 1, MoE or MLA models are
written with status skipped (this script runs one GPU's dense step only).

UNVERIFIED: written against the documented torch 2.x API (F.rms_norm needs torch >= 2.4) and not
run here (no GPU, no torch on the CI machine); .ci/gpu-check runs it where a GPU is lent.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import Budget, RowWriter, Timer, base_args, ok_rows, write_sidecar  # noqa: E402

DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def model_of(step_csv):
    """The sidecar's model section of the bench_step run that wrote step_csv."""
    with open(step_csv[:-4] + ".json") as f:
        return json.load(f)["model"]


def build(torch, m, dtype):
    """The step's parameters: embedding, the layers, final norm, logits (untied)."""
    nn = torch.nn
    h, heads, kv, hd, ffn, vocab = m["hidden"], m["heads"], m["kv_heads"], m["head_dim"], m["ffn"], m["vocab"]
    layers = nn.ModuleList()
    for _ in range(m["layers"]):
        layers.append(nn.ModuleDict({
            "attn_norm": nn.RMSNorm(h), "qkv": nn.Linear(h, (heads + 2 * kv) * hd, bias=False),
            "out": nn.Linear(heads * hd, h, bias=False), "mlp_norm": nn.RMSNorm(h),
            "gate": nn.Linear(h, ffn, bias=False), "up": nn.Linear(h, ffn, bias=False),
            "down": nn.Linear(ffn, h, bias=False)}))
    model = nn.ModuleDict({"embed": nn.Embedding(vocab, h), "layers": layers, "final_norm": nn.RMSNorm(h),
                           "logits": nn.Linear(h, vocab, bias=False)})
    return model.to(device="cuda", dtype=dtype)


def forward(torch, model, m, tokens):
    F = torch.nn.functional
    heads, kv, hd = m["heads"], m["kv_heads"], m["head_dim"]
    x = model["embed"](tokens)
    b, s, _ = x.shape
    for layer in model["layers"]:
        q, k, v = layer["qkv"](layer["attn_norm"](x)).split([heads * hd, kv * hd, kv * hd], dim=-1)
        q = q.view(b, s, heads, hd).transpose(1, 2)
        k = k.view(b, s, kv, hd).transpose(1, 2).repeat_interleave(heads // kv, dim=1)
        v = v.view(b, s, kv, hd).transpose(1, 2).repeat_interleave(heads // kv, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + layer["out"](a.transpose(1, 2).reshape(b, s, heads * hd))
        y = layer["mlp_norm"](x)
        x = x + layer["down"](F.silu(layer["gate"](y)) * layer["up"](y))
    return model["logits"](model["final_norm"](x))


def main():
    ap = base_args(__doc__.splitlines()[0])
    a = ap.parse_args()
    import torch  # noqa: E402 (after --help works without torch)
    F = torch.nn.functional
    timer, budget = Timer(torch, a.quick), Budget(a.time_budget)
    out = RowWriter(a.out, ["model", "tp", "seq", "micro_batch", "dtype"])
    for path in a.points_from:
        if not os.path.exists(path):
            continue
        section = model_of(path)
        for r in ok_rows([path], "step"):
            row = {"bench": "step", "point": r["point"], "torch_op": "llama_step_fwd_bwd_adamw", "model": r["model"],
                   "tp": r["tp"], "seq": r["seq"], "micro_batch": r["micro_batch"], "dtype": r["dtype"]}
            m, layout = section["model"], section["layout"]
            if any(int(r[k]) > 1 for k in ("tp", "pp", "cp", "ep")) or m.get("experts", 0) or m.get("kv_lora_rank", 0):
                out.write(dict(row, status="skipped", detail="one-GPU dense step only (tp = pp = cp = ep = 1)"))
                continue
            if budget.expired():
                out.write(dict(row, status="skipped", detail="time budget spent"))
                continue
            dtype = getattr(torch, DTYPES[r["dtype"]])
            model = build(torch, m, dtype)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
            tokens = torch.randint(0, m["vocab"], (int(r["micro_batch"]), int(r["seq"])), device="cuda")
            target = torch.randint(0, m["vocab"], tokens.shape, device="cuda")

            def step():
                logits = forward(torch, model, m, tokens)
                loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), target.view(-1))
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=False)

            stats = timer.measure(step, "cold" if r.get("regime", "hot").startswith("cold") else "hot")
            out.write(dict(row, status="ok", detail="", **stats))
            del model, opt
            torch.cuda.empty_cache()
    out.close()
    write_sidecar(a.out, "step", torch, {"layout": "tp=1 (one GPU)"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
