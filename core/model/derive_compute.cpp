// GEMMs and attention of one step on one rank, and the parameters each layer puts there.
// Megatron-LM's layer structure: column-parallel QKV / MLP up (and gate) / logits, row-parallel
// attention output and MLP down, all split over tp; MoE experts split over ep (whole experts)
// and tp (their width); attention heads split over tp and the sequence over cp.
#include <algorithm>

#include "core/model/workload.h"

namespace gpucal::model::detail {

namespace {

struct Counts {
  int64_t all_layers, dense_layers, moe_layers, micro_batches;
};

Counts counts_of(const StepFacts& f) {
  return {f.dense_layers + f.moe_layers, f.dense_layers, f.moe_layers, f.micro_batches};
}

// Transformer Engine's casts around an fp8 linear layer: its input in forward and its output's
// gradient in backward, each read in bf16 and written in fp8 twice, as is and transposed (Hopper's
// fp8 GEMMs take only the TN layout, so wgrad needs the transposes). That moves the bytes of a
// bf16 copy of the tensor (2 read + 1 + 1 written per element): priced as bench_memory's `copy` of
// it. The amax each cast records rides in the same pass (delayed scaling); the weights' casts,
// once per step (TE keeps them across micro-batches), are left out, and a norm that writes fp8
// itself (TE's LayerNormLinear) is counted as the norm and a cast. A gated MLP's gate and up
// projections are one linear in TE (linear_fc1), so its input is cast once (`shares_input`).
void add_fp8_casts(Workload& w, const std::string& name, int64_t in, int64_t out, int64_t tokens, int64_t calls,
                   int64_t batch, bool shares_input) {
  auto cast = [&](const std::string& what, int64_t width) {
    ModelOp op;
    op.kind = OpKind::memory;
    op.role = name + "_fp8_cast_" + what;  // the linear's name first: exports place it by it
    op.calls_per_step = calls;
    op.dtype = w.layout.dtype;
    op.memory = {.kernel = "copy", .bytes = tokens * width * batch * static_cast<int64_t>(dtype_bytes(w.layout.dtype))};
    w.ops.push_back(op);
  };
  if (!shares_input) cast("input_fwd", in);
  cast("grad_bwd", out);
}

// The three GEMMs of a linear layer in[in] -> out[out] over `tokens` tokens (workload.h
// gives the forms), `calls` times per step each. batch > 1: local experts, one grouped GEMM.
// In fp8 (ParallelLayout::fp8_gemms) with Transformer Engine's casts (add_fp8_casts).
void add_linear(Workload& w, const std::string& name, int64_t in, int64_t out, int64_t tokens, int64_t calls,
                int64_t batch = 1, bool in_gemm_dtype = true, bool shares_input = false) {
  if (calls == 0 || tokens == 0) return;
  const DType d = in_gemm_dtype ? w.layout.gemm_dtype() : w.layout.dtype, out_d = w.layout.dtype;
  if (d == DType::fp8_e4m3 || d == DType::fp8_e5m2) add_fp8_casts(w, name, in, out, tokens, calls, batch, shares_input);
  auto gemm = [&](const std::string& form, const std::string& layout, int64_t m, int64_t n, int64_t k,
                  double beta, DType out_dtype) {
    ModelOp op;
    op.kind = OpKind::gemm;
    op.role = name + "_" + form;
    op.calls_per_step = calls;
    op.dtype = d;
    op.gemm = {
        .m = m, .n = n, .k = k, .batch = batch, .layout = layout, .beta = beta, .out_dtype = out_dtype, .accumulation = {}};
    if (d == DType::fp8_e4m3 || d == DType::fp8_e5m2) op.gemm.accumulation = form == "fwd" ? "fast" : "split";
    w.ops.push_back(op);
  };
  gemm("fwd", "TN", out, tokens, in, 0.0, out_d);
  gemm("dgrad", "NN", in, tokens, out, 0.0, out_d);
  gemm("wgrad", "NT", in, out, tokens, 1.0, DType::fp32);
}

void add_attention_kernel(Workload& w, const std::string& role, const AttentionShape& s, int64_t calls) {
  if (calls == 0) return;
  for (const char* pass : {"fwd", "bwd"}) {
    ModelOp op;
    op.kind = OpKind::attention;
    op.role = role + "_" + pass;
    op.calls_per_step = calls;
    op.dtype = w.layout.dtype;
    op.attention = s;
    op.attention.pass = pass;
    w.ops.push_back(op);
  }
}

}  // namespace

void add_compute_ops(Workload& w) {
  const ModelSpec& m = w.model;
  const ParallelLayout& l = w.layout;
  const StepFacts& f = w.facts;
  const Counts c = counts_of(f);
  const int64_t T = f.tokens, tp = l.tp;
  const int64_t heads = m.heads / tp, kv = m.kv_heads / tp, hd = m.head_dim, vd = m.v_dim();
  const int64_t attn_calls = c.all_layers * c.micro_batches;

  // Attention projections.
  if (!m.mla()) {
    add_linear(w, "qkv", m.hidden, heads * hd + kv * hd + kv * vd, T, attn_calls);
  } else {
    // MLA: low-rank down-projections (whole on every TP rank), then per-head up-projections.
    if (m.q_lora_rank > 0) {
      add_linear(w, "q_down", m.hidden, m.q_lora_rank, T, attn_calls);
      add_linear(w, "q_up", m.q_lora_rank, heads * hd, T, attn_calls);
    } else {
      add_linear(w, "q_proj", m.hidden, heads * hd, T, attn_calls);
    }
    add_linear(w, "kv_down", m.hidden, m.kv_lora_rank + m.rope_head_dim, T, attn_calls);
    add_linear(w, "kv_up", m.kv_lora_rank, heads * (hd - m.rope_head_dim + vd), T, attn_calls);
  }
  add_linear(w, "attn_out", heads * vd, m.hidden, T, attn_calls);

  // The attention kernel on this rank's sequence chunk. Without cp: the whole sequence. With
  // cp (Transformer Engine's ring, load-balanced for causal models): per layer, one step on
  // the rank's own chunk (causal when the model is) and cp - 1 steps against the other ranks'
  // KV chunks, which for a causal model see half of it: unmasked seq_q = T, seq_kv = T / 2
  // (half of the rank's queries against a whole chunk does the same work; we time this form).
  const int64_t b = l.micro_batch, s_local = f.seq / l.cp;
  AttentionShape a{.batch = b,
                   .heads = heads,
                   .kv_heads = kv,
                   .seq_q = s_local,
                   .seq_kv = s_local,
                   .head_dim = hd,
                   .causal = m.causal};
  add_attention_kernel(w, "attn", a, attn_calls);
  if (l.cp > 1) {
    AttentionShape off = a;
    off.causal = false;
    if (m.causal) off.seq_kv = s_local / 2;
    add_attention_kernel(w, "attn_cp_step", off, attn_calls * (l.cp - 1));
  }

  // MLPs: dense layers, then MoE layers (router, routed experts as a grouped GEMM over the
  // rank's experts with balanced routing, shared experts like a dense MLP).
  auto mlp = [&](const std::string& prefix, int64_t width, int64_t tokens, int64_t calls, int64_t batch) {
    if (m.gated) add_linear(w, prefix + "_gate", m.hidden, width, tokens, calls, batch);
    add_linear(w, prefix + "_up", m.hidden, width, tokens, calls, batch, true, /*shares_input=*/m.gated);
    add_linear(w, prefix + "_down", width, m.hidden, tokens, calls, batch);
  };
  if (c.dense_layers > 0) mlp("mlp", m.ffn / tp, T, c.dense_layers * c.micro_batches, 1);
  if (c.moe_layers > 0) {
    const int64_t moe_calls = c.moe_layers * c.micro_batches;
    add_linear(w, "router", m.hidden, m.experts, f.tokens_sp, moe_calls, 1, /*in_gemm_dtype=*/false);  // not TE
    mlp("expert", m.expert_ffn / tp, f.tokens_per_expert, moe_calls, f.local_experts);
    if (m.shared_experts > 0) mlp("shared_expert", m.shared_experts * m.shared_ffn / tp, T, moe_calls, 1);
  }

  // Logits on the last stage: column-parallel over the padded vocabulary.
  if (f.last_stage && m.vocab > 0)
    add_linear(w, "logits", m.hidden, f.vocab_padded / tp, T, c.micro_batches, 1, /*in_gemm_dtype=*/false);
}

LayerParams layer_params(const ModelSpec& m, const ParallelLayout& l, const StepFacts& f, int64_t layer) {
  const int64_t h = m.hidden, tp = l.tp, heads = m.heads / tp, kv = m.kv_heads / tp;
  const int64_t hd = m.head_dim, vd = m.v_dim();
  const int64_t norm = (m.norm == "layernorm" ? 2 : 1) * h;  // weight (+ bias)
  const int64_t bias = m.bias ? 1 : 0;
  LayerParams p;
  // Attention.
  if (!m.mla()) {
    const int64_t qkv = heads * hd + kv * hd + kv * vd;
    p.dense += h * qkv + bias * qkv;
  } else {
    if (m.q_lora_rank > 0) {
      p.dense += h * m.q_lora_rank + m.q_lora_rank;  // q down-projection (whole on every tp rank), its norm
      p.dense += m.q_lora_rank * heads * hd;
    } else {
      p.dense += h * heads * hd;
    }
    p.dense += h * (m.kv_lora_rank + m.rope_head_dim) + m.kv_lora_rank;  // kv down-projection, its norm
    p.dense += m.kv_lora_rank * heads * (hd - m.rope_head_dim + vd);
  }
  p.dense += heads * vd * h;
  p.sp_allreduced += bias * h + 2 * norm;  // the row-parallel bias and the two norms
  // MLP.
  const int64_t mats = m.gated ? 3 : 2, col = m.gated ? 2 : 1;
  if (!m.is_moe_layer(layer)) {
    p.dense += mats * h * (m.ffn / tp) + bias * col * (m.ffn / tp);
    p.sp_allreduced += bias * h;
  } else {
    p.sp_allreduced += h * m.experts;  // router (fed by the rank's sequence shard)
    p.expert += f.local_experts * (mats * h * (m.expert_ffn / tp) + bias * (col * (m.expert_ffn / tp) + h));
    if (m.shared_experts > 0) p.dense += mats * h * (m.shared_experts * m.shared_ffn / tp);
  }
  p.dense += p.sp_allreduced;
  return p;
}

LayerParams stage_extra_params(const ModelSpec& m, const ParallelLayout& l, const StepFacts& f) {
  LayerParams p;
  const int64_t h = m.hidden;
  if (f.first_stage && m.vocab > 0) p.dense += f.vocab_padded / l.tp * h;  // vocab-parallel embedding
  if (f.first_stage && m.position == "learned") p.dense += m.seq * h;      // the position table is not split
  if (f.last_stage) {
    p.sp_allreduced += (m.norm == "layernorm" ? 2 : 1) * h;  // final norm
    // The output layer: its own weight, or, tied with pp > 1, the last stage's copy of the embedding.
    if (m.vocab > 0 && (!m.tied_embeddings || l.pp > 1)) p.dense += f.vocab_padded / l.tp * h;
  }
  p.dense += p.sp_allreduced;
  return p;
}

}  // namespace gpucal::model::detail
