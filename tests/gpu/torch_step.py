#!/usr/bin/env python3
"""The step bench_step runs, written in PyTorch: one dense Llama-style training step on one GPU,
the same operations on the same shapes in the same dtype, timed with CUDA events in the step
row's regime; one CSV row per bench_step row, keyed by its `point`, so tests/gpu/ratios.py joins
it to bench_step's row and to `gpucal predict --measure-step` (predicted / PyTorch).

    torch_step.py --out FILE.csv --points-from RESULTS/step.csv [--quick] [--time-budget S]

What the step is comes from bench_step's sidecar (step.json `model`: the model as run, the
layout, the facts, `ops`, `dense_params`), and before torch is imported the operations this
script will run are derived and compared with the sidecar's `ops` that bench_step ran (its
row's `roles_run`): GEMM shapes and layouts, attention shape, memory-bound kernels and their
rows x cols, parameter counts, calls per step. Any difference stops it (exit 1, one line):
it never writes a number for another step than bench_step's.

The step, as bench_step counts it (core/model/derive_*.cpp), per micro-batch and layer:
  - linear layers Y = X W^T as three GEMMs, Megatron's way (a custom autograd function):
    forward TN, data gradient NN, weight gradient NT accumulated (beta = 1) into an fp32 main
    gradient: `torch.addmm(main_grad, dY^T, X, out_dtype=float32, out=main_grad)`; where this
    torch lacks that overload (or it gives wrong numbers on a probe) a bf16 `torch.mm` plus an
    fp32 `add_`, said in the `wgrad` column. QKV fused (q heads + 2 kv heads), attention
    output, MLP gate, up, down; logits over the padded vocabulary;
  - RMSNorm before attention and MLP: `F.rms_norm`, or where this torch has none the
    written-out x * rsqrt(mean(x^2) + eps) * w in fp32 (`rms_norm` column says which);
  - causal attention, `F.scaled_dot_product_attention` with GQA done by the kernel
    (`enable_gqa`), else K and V repeated to the query heads; the backend is the first of
    cuDNN (bench_step's), flash, memory-efficient that takes the shape (`attention` column);
  - SwiGLU as F.silu(gate) * up, residual adds (autograd adds the residual's gradient);
  - then the final norm, cross-entropy on the bf16 logits (F.cross_entropy);
  - once per step: the gradient norm (torch.linalg.vector_norm, a read of every fp32 main
    gradient) and fused AdamW over the fp32 master parameters (embedding and output tables
    included, as bench_step's optimizer_step counts them).
Not run, as bench_step does not: the embedding lookup and its gradient (the step starts from
hidden states that require a gradient, so the first layer's data gradients run), rotary
embeddings, gradient clipping's scaling, the zeroing of main gradients, the copy of the
master weights back to bf16. What PyTorch eager runs beyond bench_step's kernels (inherent to
it, part of what predicted / PyTorch measures): SwiGLU and cross-entropy as several kernels
each way instead of one, the QKV split's backward concatenating dQ, dK, dV, the norm weights'
bf16 gradients added into their fp32 main gradients (2 x layers + 1 small adds), and the
Python/autograd cost of each op when the GPU waits for it.

Rows with tp, pp, dp, cp or ep > 1, ZeRO, MoE, MLA, LayerNorm, GELU, biases, dropout, a learned
position table or no vocabulary are written with status skipped (this script runs one GPU's
dense step only). A bench_step file without an ok row, a sidecar that does not describe it, a
GPU error or a non-finite loss: exit 1 with one line.

Written against torch 2.x (2.11 on the device machine: F.rms_norm since 2.4, enable_gqa since
2.5, addmm's out_dtype since about 2.8; older versions take the fallbacks named above). Tested
without a GPU: the pure-Python part (sidecar, plan, comparison) against a real bench_step run
(test_step_chain_host.py), and TorchStep on the CPU against plain autograd
(test_torch_step_cpu.py, where a torch is installed). Not yet run on a GPU.
"""
import contextlib
import json
import os
import sys
from collections import Counter, namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import Budget, RowWriter, Timer, base_args, ok_rows, write_sidecar  # noqa: E402

DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
ROW_COLUMNS = ["model", "tp", "seq", "micro_batch", "layers", "dtype", "regime", "flops", "tflops", "attention",
               "rms_norm", "wgrad"]
NORM_EPS = 1e-5
LR = 1e-4

Dims = namedtuple("Dims", "layers hidden heads kv_heads head_dim ffn vocab vocab_padded tied causal seq batch "
                          "micro_batches tokens dtype")


class StepError(Exception):
    """This bench_step run cannot be measured here: exit 1 with this one line."""


class Unsupported(Exception):
    """A step this script does not run: its row is written as skipped with the reason."""


# ---- Pure Python: the sidecar, the plan, the comparison (tested on the host) ----------------

def read_run(step_csv):
    """(ok rows, sidecar `model` section) of a bench_step CSV."""
    if not os.path.exists(step_csv):
        raise StepError(f"{step_csv}: no such file (did bench_step run?)")
    rows = ok_rows([step_csv], "step")
    if not rows:
        raise StepError(f"{step_csv}: no ok bench_step row (its status/detail columns say why)")
    sidecar = step_csv[:-4] + ".json" if step_csv.endswith(".csv") else step_csv + ".json"
    try:
        with open(sidecar) as f:
            section = json.load(f).get("model")
    except (OSError, ValueError) as e:
        raise StepError(f"{sidecar}: bench_step's sidecar is unreadable ({e})") from None
    if not isinstance(section, dict) or not {"model", "layout", "facts", "ops", "dense_params"} <= set(section):
        raise StepError(f"{sidecar}: no `model` section with model, layout, facts, ops and dense_params")
    return rows, section


def check_row_matches(row, section, where):
    """The CSV row and the sidecar must describe the same run."""
    m, l, f = section["model"], section["layout"], section["facts"]
    want = {"model": m["name"], "tp": l["tp"], "pp": l["pp"], "dp": l["dp"], "cp": l["cp"], "ep": l["ep"],
            "seq": f["seq"], "micro_batch": l["micro_batch"], "layers": f["layers_total"], "dtype": l["dtype"]}
    for key, value in want.items():
        if str(row.get(key)) != str(value):
            raise StepError(f"{where}: the row's {key} is {row.get(key)!r}, its sidecar says {value!r}")


def step_dims(section):
    """The dimensions of the one-GPU dense step; Unsupported naming what this script does not run."""
    m, l, f = section["model"], section["layout"], section["facts"]
    why = [f"{k} = {l[k]}" for k in ("tp", "pp", "dp", "cp", "ep") if l[k] != 1]
    why += [text for bad, text in (
        (l["zero"] != 0, f"ZeRO {l['zero']}"), (m.get("experts", 0) > 0, "MoE"), (m.get("kv_lora_rank", 0) > 0, "MLA"),
        (m["norm"] != "rmsnorm", m["norm"]), (not m["gated"], "a GELU MLP"), (m["bias"], "biases"),
        (m["dropout"] > 0, "dropout"), (m["position"] == "learned", "a learned position table"),
        (m["vocab"] == 0, "no vocabulary"), (m.get("v_head_dim", 0) not in (0, m["head_dim"]), "a value head dim"),
        (l["grad_dtype"] != "fp32", f"{l['grad_dtype']} gradients"), (l["dtype"] not in DTYPES, l["dtype"])) if bad]
    if why:
        raise Unsupported("one GPU's dense Llama-style step only (tp = pp = dp = cp = ep = 1, RMSNorm, SwiGLU, "
                          "fp32 gradients); this run has " + ", ".join(why))
    return Dims(layers=m["layers"], hidden=m["hidden"], heads=m["heads"], kv_heads=m["kv_heads"],
                head_dim=m["head_dim"], ffn=m["ffn"], vocab=m["vocab"], vocab_padded=f["vocab_padded"],
                tied=m["tied_embeddings"], causal=m["causal"], seq=f["seq"], batch=l["micro_batch"],
                micro_batches=f["micro_batches"], tokens=f["tokens_per_micro_batch"], dtype=l["dtype"])


def linears(d):
    """(name, in, out, calls per step) of every linear layer the step runs."""
    per_layer = d.layers * d.micro_batches
    return [("qkv", d.hidden, (d.heads + 2 * d.kv_heads) * d.head_dim, per_layer),
            ("attn_out", d.heads * d.head_dim, d.hidden, per_layer),
            ("mlp_gate", d.hidden, d.ffn, per_layer), ("mlp_up", d.hidden, d.ffn, per_layer),
            ("mlp_down", d.ffn, d.hidden, per_layer), ("logits", d.hidden, d.vocab_padded, d.micro_batches)]


def norms(d):
    """(name, calls per step) of the RMSNorms, each with a weight of `hidden` elements."""
    per_layer = d.layers * d.micro_batches
    return [("attn_norm", per_layer), ("mlp_norm", per_layer), ("final_norm", d.micro_batches)]


def dense_params(d):
    """Parameters the optimizer updates: the linear weights, the norm weights, the embedding
    table (an untied model's output table is a linear's weight: logits)."""
    linear = sum(i * o * (d.layers if name != "logits" else 1) for name, i, o, _ in linears(d))
    return linear + (2 * d.layers + 1) * d.hidden + (0 if d.tied else d.vocab_padded * d.hidden)


def planned_ops(d):
    """The operations this script's step runs, in the sidecar's `ops` vocabulary."""
    ops = []

    def op(bench, role, calls, dtype, shape):
        ops.append({"bench": bench, "op_role": role, "calls_per_step": calls, "dtype": dtype, "shape": shape})

    for name, i, o, calls in linears(d):
        T = d.tokens
        for form, layout, m, n, k, beta, out in (("fwd", "TN", o, T, i, 0, d.dtype), ("dgrad", "NN", i, T, o, 0, d.dtype),
                                                 ("wgrad", "NT", i, o, T, 1, "fp32")):
            op("gemm", f"{name}_{form}", calls, d.dtype,
               {"m": m, "n": n, "k": k, "batch": 1, "layout": layout, "beta": beta, "out_dtype": out})
    for p in ("fwd", "bwd"):
        op("attention", f"attn_{p}", d.layers * d.micro_batches, d.dtype,
           {"pass": p, "batch": d.batch, "heads": d.heads, "kv_heads": d.kv_heads, "seq_q": d.seq, "seq_kv": d.seq,
            "head_dim": d.head_dim, "causal": d.causal})

    def rowwise(role, kernel, rows, cols, calls):
        for p in ("_fwd", "_bwd"):
            op("memory", role + p, calls, d.dtype,
               {"kernel": kernel + p, "rows": rows, "cols": cols, "params": 0, "bytes": 0})

    for name, calls in norms(d):
        rowwise(name, "rmsnorm", d.tokens, d.hidden, calls)
    rowwise("mlp_act", "swiglu", d.tokens, d.ffn, d.layers * d.micro_batches)
    for p in ("fwd", "bwd"):  # after attention and after the MLP; backward: the residual's gradient added
        op("memory", f"residual_{p}", 2 * d.layers * d.micro_batches, d.dtype,
           {"kernel": "residual_add", "rows": d.tokens, "cols": d.hidden, "params": 0, "bytes": 0})
    rowwise("cross_entropy", "cross_entropy", d.tokens, d.vocab_padded, d.micro_batches)
    params = dense_params(d)
    op("memory", "grad_norm", 1, "fp32", {"kernel": "read", "rows": 0, "cols": 0, "params": 0, "bytes": 4 * params})
    op("memory", "optimizer_step", 1, "fp32", {"kernel": "adamw_step", "rows": 0, "cols": 0, "params": params, "bytes": 0})
    return ops


def canonical(op):
    """An op as a comparable key (numbers as floats: the sidecar writes beta 0 as 0.0)."""
    def norm(v):
        return v if isinstance(v, (bool, str)) else float(v)
    shape = tuple(sorted((k, norm(v)) for k, v in op["shape"].items()))
    return (op["bench"], op["op_role"], int(op["calls_per_step"]), op["dtype"], shape)


def differences(planned, section, roles_run):
    """Lines naming what differs between this script's step and the ops bench_step ran."""
    ran = set(roles_run.split("+")) if roles_run else set()
    theirs = Counter(canonical(o) for o in section["ops"] if o["op_role"] in ran)
    ours = Counter(canonical(o) for o in planned)
    out = [f"bench_step ran {k[1]} {dict(k[4])} x{k[2]}, this script would not" for k in theirs - ours]
    out += [f"this script would run {k[1]} {dict(k[4])} x{k[2]}, bench_step did not" for k in ours - theirs]
    return out


def plan_row(row, section, where):
    """(Dims, None) for a step this script runs exactly as bench_step did; (None, reason) for one
    it does not run; StepError when it would run something else than bench_step."""
    check_row_matches(row, section, where)
    try:
        d = step_dims(section)
    except Unsupported as e:
        return None, str(e)
    diff = differences(planned_ops(d), section, row.get("roles_run", ""))
    if diff:
        raise StepError(f"{where}: the PyTorch step would not be bench_step's ({len(diff)} differences): "
                        + "; ".join(diff[:3]))
    if dense_params(d) != section["dense_params"]:
        raise StepError(f"{where}: {dense_params(d)} parameters here, bench_step's sidecar counts "
                        f"{section['dense_params']}")
    return d, None


# ---- torch: the step itself (run where a GPU is) ---------------------------------------------

def synchronize(torch, device):
    if device == "cuda":
        torch.cuda.synchronize()


def probe_wgrad(torch, dtype, device):
    """The weight-gradient accumulation into an fp32 main gradient, and how it is done."""
    a = torch.randn(96, 64, device=device).to(dtype).t()  # dY^T: a transposed view, as in backward
    b = torch.randn(96, 48, device=device).to(dtype)
    main = torch.randn(64, 48, device=device)
    want = main + a.float() @ b.float()
    try:
        torch.addmm(main, a, b, out_dtype=torch.float32, out=main)
        synchronize(torch, device)
        if torch.allclose(main, want, rtol=1e-3, atol=1e-3):
            return (lambda g, dy_t, x: torch.addmm(g, dy_t, x, out_dtype=torch.float32, out=g),
                    "torch.addmm(out_dtype=float32, out=main_grad): beta 1 into the fp32 main gradient")
        why = "torch.addmm(out_dtype=float32) gave wrong sums on a probe"
    except (TypeError, RuntimeError) as e:
        why = f"no torch.addmm out_dtype ({str(e).strip().splitlines()[0][:80] if str(e).strip() else type(e).__name__})"
    return (lambda g, dy_t, x: g.add_(torch.mm(dy_t, x))), f"torch.mm in {str(dtype)[6:]} + fp32 add_ ({why})"


def make_linear(torch, wgrad):
    class LinearMainGrad(torch.autograd.Function):
        """Y = X W^T; backward: dX = dY W, and dW accumulated into the fp32 main gradient."""

        @staticmethod
        def forward(ctx, x, weight, main_grad):
            ctx.save_for_backward(x, weight)
            ctx.main_grad = main_grad
            return torch.matmul(x, weight.t())

        @staticmethod
        def backward(ctx, dy):
            x, weight = ctx.saved_tensors
            dx = torch.matmul(dy, weight)
            wgrad(ctx.main_grad, dy.t(), x)
            return dx, None, None

    return LinearMainGrad.apply


def make_rms_norm(torch):
    F = torch.nn.functional
    if hasattr(F, "rms_norm"):
        return (lambda x, w: F.rms_norm(x, (x.shape[-1],), w, NORM_EPS)), "F.rms_norm"

    def written_out(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + NORM_EPS)).to(x.dtype) * w

    return written_out, "written out: x * rsqrt(mean(x^2) + eps) * w in fp32 (this torch has no F.rms_norm)"


def heads_of(qkv, d):
    """Q, K, V as [batch, heads, seq, head_dim] views of the fused QKV output [tokens, (H + 2 KV) hd]."""
    q, k, v = qkv.split([d.heads * d.head_dim, d.kv_heads * d.head_dim, d.kv_heads * d.head_dim], dim=-1)
    return tuple(t.view(d.batch, d.seq, -1, d.head_dim).transpose(1, 2) for t in (q, k, v))


def make_attention(torch, d, dtype, device):
    """The attention call on heads_of's views, and what it is: the first of cuDNN, flash,
    memory-efficient that runs the step's shape forward and backward and agrees with the math
    backend in fp32, with GQA in the kernel where this torch can, else K and V repeated to the
    query heads."""
    F = torch.nn.functional
    if not hasattr(F, "scaled_dot_product_attention"):
        raise StepError(f"torch {torch.__version__} has no F.scaled_dot_product_attention (PyTorch >= 2.0 needed)")
    group = d.heads // d.kv_heads

    def native(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=d.causal, enable_gqa=True) if group > 1 else \
            F.scaled_dot_product_attention(q, k, v, is_causal=d.causal)

    def repeated(q, k, v):
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=d.causal)

    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415
    except ImportError:
        return native if group == 1 else repeated, None, "sdpa: PyTorch's own choice (no torch.nn.attention here)"
    qkv = torch.randn(d.tokens, (d.heads + 2 * d.kv_heads) * d.head_dim, device=device, dtype=dtype)
    qkv.requires_grad_(True)
    q, k, v = heads_of(qkv, d)
    want = None
    if d.batch * d.heads * d.seq * d.seq * 4 <= 4 << 30:  # the math backend's fp32 scores fit in 4 GiB
        with sdpa_kernel(SDPBackend.MATH):
            want = repeated(q.float(), k.float(), v.float()).to(dtype)
    backends = [("cudnn", "CUDNN_ATTENTION"), ("flash", "FLASH_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION")]
    if device != "cuda":  # the CPU test of the plumbing
        backends.append(("math", "MATH"))
    tried = []
    for fn, gqa in ((native, "GQA in the kernel (enable_gqa)"), (repeated, "K, V repeated to the query heads")):
        if fn is repeated and group == 1:
            break
        for name, attr in backends:
            if not hasattr(SDPBackend, attr):
                continue
            try:
                with sdpa_kernel(getattr(SDPBackend, attr)):
                    got = fn(q, k, v)
                    got.sum().backward()
                synchronize(torch, device)
            except (RuntimeError, TypeError) as e:
                tried.append(f"{name}: {str(e).strip().splitlines()[0][:60] if str(e).strip() else type(e).__name__}")
                continue
            if want is not None and not torch.allclose(got.float(), want.float(), rtol=2e-2, atol=2e-2):
                raise StepError(f"sdpa:{name} ({gqa}) disagrees with the math backend on the step's attention "
                                f"(max difference {(got.float() - want.float()).abs().max().item():.3g})")
            checked = "checked against the math backend" if want is not None else "unchecked: scores over 4 GiB"
            return fn, getattr(SDPBackend, attr), f"sdpa:{name}, {gqa}, {checked}"
    raise StepError("no SDPA backend runs the step's attention (" + "; ".join(tried[:3]) + ")")


class TorchStep:
    """The step's tensors and one call of it: micro-batches of forward and backward, then the
    gradient norm and AdamW."""

    def __init__(self, torch, d, device="cuda"):
        self.torch, self.d, self.device = torch, d, device
        F = torch.nn.functional
        dtype = getattr(torch, DTYPES[d.dtype])
        wgrad, self.wgrad_text = (lambda g, dy_t, x: g.addmm_(dy_t, x)), "torch addmm_ (fp32 model)"
        if dtype != torch.float32:
            wgrad, self.wgrad_text = probe_wgrad(torch, dtype, device)
        self.linear = make_linear(torch, wgrad)
        self.rms_norm, self.rms_norm_text = make_rms_norm(torch)
        self.attention, self.backend, self.attention_text = make_attention(torch, d, dtype, device)
        n = dense_params(d)
        self.master = torch.empty(n, device=device, dtype=torch.float32).normal_(0, 0.02)
        self.main_grad = torch.zeros(n, device=device, dtype=torch.float32)
        views, offset = [], 0

        def carve(shape):
            nonlocal offset
            size = 1
            for s in shape:
                size *= s
            views.append((self.master[offset:offset + size].view(shape), self.main_grad[offset:offset + size].view(shape)))
            offset += size
            return views[-1]

        def weight(i, o):
            master, grad = carve((o, i))
            return master.to(dtype), grad  # the bf16 copy the GEMMs read; its fp32 main gradient

        def norm_weight():
            master, grad = carve((d.hidden,))
            master.fill_(1.0)
            return master.to(dtype).requires_grad_(True), grad

        named = {name: (i, o) for name, i, o, _ in linears(d)}
        self.layers = []
        for _ in range(d.layers):
            layer = {name: weight(*named[name]) for name in ("qkv", "attn_out", "mlp_gate", "mlp_up", "mlp_down")}
            layer["attn_norm"], layer["mlp_norm"] = norm_weight(), norm_weight()
            self.layers.append(layer)
        self.final_norm, self.logits = norm_weight(), weight(*named["logits"])
        if not d.tied:
            carve((d.vocab_padded, d.hidden))  # the embedding table: in the optimizer, never looked up
        if offset != n:
            raise StepError(f"carved {offset} parameters of {n}")
        self.norm_weights = [self.final_norm] + [l[k] for l in self.layers for k in ("attn_norm", "mlp_norm")]
        params = []
        for master, grad in views:
            p = torch.nn.Parameter(master, requires_grad=True)
            p.grad = grad
            params.append(p)
        self.optimizer = torch.optim.AdamW(params, lr=LR, fused=True)
        self.hidden_in = torch.randn(d.tokens, d.hidden, device=device, dtype=dtype).requires_grad_(True)
        self.target = torch.randint(0, d.vocab, (d.tokens,), device=device)
        self.cross_entropy = F.cross_entropy

    def forward(self):
        d, linear, norm = self.d, self.linear, self.rms_norm
        x = self.hidden_in
        for layer in self.layers:
            q, k, v = heads_of(linear(norm(x, layer["attn_norm"][0]), *layer["qkv"]), d)
            a = self.attention(q, k, v).transpose(1, 2).reshape(d.tokens, d.heads * d.head_dim)
            x = x + linear(a, *layer["attn_out"])
            y = norm(x, layer["mlp_norm"][0])
            act = self.torch.nn.functional.silu(linear(y, *layer["mlp_gate"])) * linear(y, *layer["mlp_up"])
            x = x + linear(act, *layer["mlp_down"])
        logits = linear(norm(x, self.final_norm[0]), *self.logits)
        return self.cross_entropy(logits, self.target)

    def __call__(self):
        loss = None
        for _ in range(self.d.micro_batches):
            loss = self.forward()
            loss.backward()
            self.hidden_in.grad = None
            for w, main in self.norm_weights:
                main.add_(w.grad.view(-1))
                w.grad = None
        grad_norm = self.torch.linalg.vector_norm(self.main_grad)  # for clipping: a read of every gradient
        self.optimizer.step()
        return loss, grad_norm

    def check(self):
        """One step outside the timer: the loss and the gradient norm must be finite and the
        gradients written."""
        loss, grad_norm = self()
        synchronize(self.torch, self.device)
        loss, grad_norm = float(loss), float(grad_norm)
        if not (loss == loss and abs(loss) != float("inf")) or not (0 < grad_norm < float("inf")):
            raise StepError(f"after one step the loss is {loss} and the gradient norm {grad_norm}")


def measure(torch, d, row, timer):
    step = TorchStep(torch, d)
    backend = contextlib.nullcontext()
    if step.backend is not None:
        from torch.nn.attention import sdpa_kernel  # noqa: PLC0415
        backend = sdpa_kernel(step.backend)
    with backend:
        step.check()
        stats = timer.measure(step, "cold" if row.get("regime", "cold").startswith("cold") else "hot")
    out = {"status": "ok", "detail": "", "attention": step.attention_text, "rms_norm": step.rms_norm_text,
           "wgrad": step.wgrad_text, **stats}
    flops = float(row.get("flops") or 0)
    if flops > 0:
        out.update(flops=flops, tflops=flops / stats["time_us_median"] / 1e6)
    return out


def main(argv=None):
    a = base_args(__doc__.splitlines()[0]).parse_args(argv)
    try:
        plans = []
        if not a.points_from:
            raise StepError("--points-from RESULTS/step.csv is needed (bench_step's rows say what to run)")
        for path in a.points_from:
            rows, section = read_run(path)
            for r in rows:
                plans.append((r, *plan_row(r, section, f"{path} {r['point']}")))
        try:
            import torch  # noqa: PLC0415 (the plan is checked first, and --help works without torch)
        except ImportError as e:
            raise StepError(f"PyTorch is not importable here ({e})") from None
        if not torch.cuda.is_available():
            raise StepError("torch sees no CUDA device")
        timer, budget = Timer(torch, a.quick, max_time_s=a.max_time_per_point), Budget(a.time_budget)
        out = RowWriter(a.out, ROW_COLUMNS)
        for r, d, skip_reason in plans:
            row = {"bench": "step", "point": r["point"], "torch_op": "torch eager step",
                   **{c: r.get(c, "") for c in ("model", "tp", "seq", "micro_batch", "layers", "dtype", "regime")}}
            if skip_reason or budget.expired():
                out.write(dict(row, status="skipped", detail=skip_reason or "time budget spent"))
                continue
            try:
                out.write(dict(row, **measure(torch, d, r, timer)))
            except StepError:
                raise
            except Exception as e:  # noqa: BLE001 (CUDA errors, out of memory, API drift: no number, one line)
                text = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
                raise StepError(f"{r['point']}: {type(e).__name__}: {text}") from None
            finally:
                torch.cuda.empty_cache()
        out.close()
        write_sidecar(a.out, "step", torch, {"layout": "one GPU", "norm_eps": NORM_EPS, "adamw_lr": LR})
        print(f"torch_step: {out.rows} rows -> {a.out}")
        return 0
    except StepError as e:
        print(f"torch_step: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
