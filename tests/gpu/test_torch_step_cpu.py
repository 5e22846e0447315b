#!/usr/bin/env python3
"""torch_step.py's PyTorch step run on the CPU with whatever torch this Python has (Debian's
python3-torch where installed): the weight gradients its custom linear layers accumulate into
the fp32 main gradients, and the norm weights' gradients added there, equal plain autograd's on
the same weights (fp32: to rounding; bf16: within 2%), the embedding table's main gradient is
left untouched, and whole steps (micro-batches, gradient norm, AdamW) run through the timer.
Exit 77 (ctest: skipped) where this Python has no torch.

Scaffolding for the CPU, not part of what the GPU runs: where torch has no
F.scaled_dot_product_attention (< 2.0) the test supplies a written-out one, and AdamW runs
unfused (fused needs CUDA in older versions).
"""
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_common  # noqa: E402

torch = torch_common.import_torch_or_skip()
import torch.nn.functional as F  # noqa: E402
import torch_step  # noqa: E402


def written_out_attention(q, k, v, is_causal=False):
    scores = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if is_causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(scores, -1) @ v.float()).to(q.dtype)


if not hasattr(F, "scaled_dot_product_attention"):
    F.scaled_dot_product_attention = written_out_attention
_AdamW = torch.optim.AdamW
torch.optim.AdamW = lambda params, **kw: _AdamW(params, **{k: v for k, v in kw.items() if k != "fused"})

DIMS = torch_step.Dims(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=96, vocab=500, vocab_padded=512,
                       tied=False, causal=True, seq=16, batch=2, micro_batches=2, tokens=32, dtype="fp32")


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + torch_step.NORM_EPS) * w


def reference_gradients(step, d):
    """Plain autograd in fp32 on copies of the step's weights: {name: gradient} per layer, and
    the final norm's and the logits'."""
    def leaf(t):
        return t.detach().float().clone().requires_grad_(True)

    layers = [{k: leaf(v[0]) for k, v in layer.items()} for layer in step.layers]
    final_norm, logits = leaf(step.final_norm[0]), leaf(step.logits[0])
    x, group = step.hidden_in.detach().float(), d.heads // d.kv_heads
    for w in layers:
        q, k, v = torch_step.heads_of(rms(x, w["attn_norm"]) @ w["qkv"].t(), d)
        a = written_out_attention(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), d.causal)
        x = x + a.transpose(1, 2).reshape(d.tokens, -1) @ w["attn_out"].t()
        y = rms(x, w["mlp_norm"])
        x = x + (F.silu(y @ w["mlp_gate"].t()) * (y @ w["mlp_up"].t())) @ w["mlp_down"].t()
    F.cross_entropy(rms(x, final_norm) @ logits.t(), step.target).backward()
    return [{k: v.grad for k, v in w.items()} for w in layers], final_norm.grad, logits.grad


class TorchStepOnCpuTest(unittest.TestCase):
    def check_gradients(self, dtype, tolerance):
        d = DIMS._replace(dtype=dtype)
        torch.manual_seed(0)
        step = torch_step.TorchStep(torch, d, device="cpu")
        self.assertEqual(step.master.numel(), torch_step.dense_params(d))
        want_layers, want_final, want_logits = reference_gradients(step, d)
        step.forward().backward()  # one micro-batch, no optimizer: the gradients as accumulated
        for w, main in step.norm_weights:
            main.add_(w.grad.view(-1))

        def close(got, want, what):
            self.assertGreater(want.abs().max().item(), 0, what)
            err = (got.float() - want).abs().max().item() / want.abs().max().item()
            self.assertLess(err, tolerance, f"{dtype} {what}: relative error {err:.2e}")

        for layer, want in zip(step.layers, want_layers):
            for name in ("qkv", "attn_out", "mlp_gate", "mlp_up", "mlp_down", "attn_norm", "mlp_norm"):
                close(layer[name][1], want[name], name)
        close(step.final_norm[1], want_final, "final_norm")
        close(step.logits[1], want_logits, "logits")
        self.assertEqual(step.main_grad[-d.vocab_padded * d.hidden:].abs().max().item(), 0)  # never looked up
        return step

    def test_fp32_gradients_are_plain_autogradients(self):
        step = self.check_gradients("fp32", 1e-5)
        self.assertIn("fp32 model", step.wgrad_text)

    def test_bf16_gradients_within_rounding(self):
        step = self.check_gradients("bf16", 2e-2)
        self.assertTrue(step.wgrad_text.startswith(("torch.addmm(out_dtype=float32", "torch.mm in bfloat16")),
                        step.wgrad_text)

    def test_whole_steps_through_the_timer(self):
        torch.manual_seed(1)
        step = torch_step.TorchStep(torch, DIMS._replace(dtype="bf16"), device="cpu")
        before = step.master.clone()
        step.check()  # finite loss, positive gradient norm
        self.assertGreater((step.master - before).abs().max().item(), 0)  # AdamW moved every table
        self.assertGreater((step.master[-DIMS.vocab_padded * DIMS.hidden:] - before[-DIMS.vocab_padded * DIMS.hidden:])
                           .abs().max().item(), 0)
        stats = torch_common.Timer(torch, quick=True, device="cpu").measure(step, "hot")
        self.assertGreaterEqual(stats["samples"], 5)
        self.assertGreater(stats["time_us_median"], 0)
        for text in (step.attention_text, step.rms_norm_text, step.wgrad_text):
            self.assertTrue(text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
