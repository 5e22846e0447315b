// The memory-bound ops of one step on one rank, named by bench_memory's kernels: norms,
// activations, residual adds, the router's softmax, cross-entropy, the gradient-norm read
// and the optimizer over the rank's parameter shard. Rows are tokens (seq / tp of them under
// sequence parallelism for the ops between the tensor-parallel regions), cols the width.
#include <algorithm>

#include "core/model/bounds.h"
#include "core/model/workload.h"

namespace gpucal::model::detail {

namespace {

void add_memory(Workload& w, const std::string& role, const MemoryShape& s, int64_t calls, DType dtype) {
  if (calls == 0) return;
  ModelOp op;
  op.kind = OpKind::memory;
  op.role = role;
  op.calls_per_step = calls;
  op.dtype = dtype;
  op.memory = s;
  w.ops.push_back(op);
}

// A row-wise op's forward and backward kernels (`kernel`_fwd, `kernel`_bwd).
void add_rowwise(Workload& w, const std::string& role, const std::string& kernel, int64_t rows, int64_t cols,
                 int64_t calls) {
  if (rows == 0 || cols == 0) return;
  for (const char* pass : {"fwd", "bwd"})
    add_memory(w, role + "_" + pass, {.kernel = kernel + "_" + pass, .rows = rows, .cols = cols}, calls,
               w.layout.dtype);
}

}  // namespace

void add_memory_ops(Workload& w) {
  const ModelSpec& m = w.model;
  const ParallelLayout& l = w.layout;
  const StepFacts& f = w.facts;
  const int64_t mb = f.micro_batches, layers = f.dense_layers + f.moe_layers;
  const int64_t T = f.tokens, rows = f.tokens_sp, h = m.hidden, tp = l.tp;

  // Pre-attention and pre-MLP norms of every layer.
  add_rowwise(w, "attn_norm", m.norm, rows, h, layers * mb);
  add_rowwise(w, "mlp_norm", m.norm, rows, h, layers * mb);
  if (m.mla()) {  // MLA normalizes its compressed latents (whole on each tp rank, all T tokens)
    if (m.q_lora_rank > 0) add_rowwise(w, "q_norm", "rmsnorm", T, m.q_lora_rank, layers * mb);
    add_rowwise(w, "kv_norm", "rmsnorm", T, m.kv_lora_rank, layers * mb);
  }
  // Activations (cols: the activation's output width on this rank).
  const std::string act = m.gated ? "swiglu" : "gelu";
  add_rowwise(w, "mlp_act", act, T, m.ffn / tp, f.dense_layers * mb);
  if (f.moe_layers > 0) {
    add_rowwise(w, "router_softmax", "softmax", rows, m.experts, f.moe_layers * mb);
    add_rowwise(w, "expert_act", act, f.tokens_per_expert * f.local_experts, m.expert_ffn / tp,
                f.moe_layers * mb);
    if (m.shared_experts > 0)
      add_rowwise(w, "shared_expert_act", act, T, m.shared_experts * m.shared_ffn / tp, f.moe_layers * mb);
  }
  // Residual adds after attention and MLP (dropout fused in when the model has it), and in
  // backward the residual branch's gradient added to the block's.
  const std::string residual = m.dropout > 0 ? "dropout_residual_add" : "residual_add";
  add_memory(w, "residual_fwd", {.kernel = residual, .rows = rows, .cols = h}, 2 * layers * mb, l.dtype);
  add_memory(w, "residual_bwd", {.kernel = "residual_add", .rows = rows, .cols = h}, 2 * layers * mb,
             l.dtype);
  // Last stage: final norm, vocabulary-parallel cross-entropy over this rank's vocab shard.
  if (f.last_stage) {
    add_rowwise(w, "final_norm", m.norm, rows, h, mb);
    if (m.vocab > 0) add_rowwise(w, "cross_entropy", "cross_entropy", T, f.vocab_padded / tp, mb);
  }
  // Once per step: the gradient norm for clipping (a read of every gradient the rank holds:
  // its shard under ZeRO >= 1) and AdamW on the fp32 master parameters of the rank's shard.
  const bool sharded = l.zero >= 1;
  const int64_t dense_shard = sharded ? ceil_div(w.dense_params, f.dp_group) : w.dense_params;
  const int64_t expert_shard = sharded ? ceil_div(w.expert_params, f.expert_dp_group) : w.expert_params;
  add_memory(w, "grad_norm",
             {.kernel = "read",
              .bytes = checked_mul(checked_add(dense_shard, expert_shard, "parameters of the rank"),
                                   static_cast<int64_t>(dtype_bytes(l.grad_dtype)), "gradient bytes")},
             1, l.grad_dtype);
  add_memory(w, "optimizer_step", {.kernel = "adamw_step", .params = dense_shard}, 1, DType::fp32);
  if (expert_shard > 0)
    add_memory(w, "optimizer_step_experts", {.kernel = "adamw_step", .params = expert_shard}, 1, DType::fp32);
}

}  // namespace gpucal::model::detail
