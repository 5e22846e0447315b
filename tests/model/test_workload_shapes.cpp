// Derived shapes and per-step call counts, checked against numbers computed by hand from the
// published hyper-parameters (the arithmetic is in the comments).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "core/model/workload.h"
#include "tests/model/usage_error_of.h"

namespace gpucal::model {
namespace {

const ModelOp& op_of(const Workload& w, const std::string& role) {
  for (const auto& o : w.ops)
    if (o.role == role) return o;
  throw std::runtime_error("no op with role " + role);
}

bool has(const Workload& w, const std::string& role) {
  for (const auto& o : w.ops)
    if (o.role == role) return true;
  return false;
}

void expect_gemm(const ModelOp& o, int64_t m, int64_t n, int64_t k, int64_t batch,
                 const std::string& layout) {
  SCOPED_TRACE(o.role);
  EXPECT_EQ(o.kind, OpKind::gemm);
  EXPECT_EQ(o.gemm.m, m);
  EXPECT_EQ(o.gemm.n, n);
  EXPECT_EQ(o.gemm.k, k);
  EXPECT_EQ(o.gemm.batch, batch);
  EXPECT_EQ(o.gemm.layout, layout);
}

ParallelLayout layout(int64_t tp, int64_t pp = 1, int64_t dp = 1) {
  ParallelLayout l;
  l.tp = tp;
  l.pp = pp;
  l.dp = dp;
  return l;
}

// --dtype fp8 (Transformer Engine's recipe): the projections' and MLPs' GEMMs take fp8_e4m3 and
// write bf16 (weight gradients fp32), the forward GEMM with fast accumulation and dgrad and wgrad
// split; the output layer, attention, element-wise ops and messages stay bf16. Shapes and counts
// are the bf16 step's, with TE's casts added: each linear's input and its output's gradient, moved
// as a bf16 copy (the gated MLP's gate and up projections share one input cast).
TEST(WorkloadShapes, Fp8GemmsOnlyInTheLinearLayers) {
  ParallelLayout l = layout(2, 1, 2);
  const Workload bf16 = derive_workload(find_preset("llama3-8b"), l);
  l.fp8_gemms = true;
  const Workload fp8 = derive_workload(find_preset("llama3-8b"), l);
  std::vector<const ModelOp*> kept;
  std::vector<std::string> casts;
  for (const ModelOp& o : fp8.ops) {
    if (o.role.find("_fp8_cast_") != std::string::npos) {
      casts.push_back(o.role);
      EXPECT_EQ(o.memory.kernel, "copy");
      EXPECT_EQ(o.dtype, DType::bf16);
    } else {
      kept.push_back(&o);
    }
  }
  EXPECT_EQ(casts, (std::vector<std::string>{
                       "qkv_fp8_cast_input_fwd", "qkv_fp8_cast_grad_bwd", "attn_out_fp8_cast_input_fwd",
                       "attn_out_fp8_cast_grad_bwd", "mlp_gate_fp8_cast_input_fwd", "mlp_gate_fp8_cast_grad_bwd",
                       "mlp_up_fp8_cast_grad_bwd", "mlp_down_fp8_cast_input_fwd", "mlp_down_fp8_cast_grad_bwd"}));
  ASSERT_EQ(kept.size(), bf16.ops.size());
  int fp8_gemms = 0;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const ModelOp& o = *kept[i];
    SCOPED_TRACE(o.role);
    EXPECT_EQ(o.role, bf16.ops[i].role);
    EXPECT_EQ(o.calls_per_step, bf16.ops[i].calls_per_step);
    if (o.kind == OpKind::gemm && o.role.rfind("logits", 0) != 0) {
      EXPECT_EQ(o.dtype, DType::fp8_e4m3);
      EXPECT_EQ(o.gemm.out_dtype, bf16.ops[i].gemm.out_dtype);  // bf16, fp32 for wgrad
      EXPECT_EQ(o.gemm.accumulation, o.role.size() > 4 && o.role.substr(o.role.size() - 4) == "_fwd" ? "fast" : "split");
      ++fp8_gemms;
    } else {
      EXPECT_EQ(o.dtype, bf16.ops[i].dtype);
      EXPECT_EQ(o.gemm.accumulation, "");
    }
  }
  EXPECT_EQ(fp8_gemms, 15);  // qkv, attn_out, mlp_gate, mlp_up, mlp_down x fwd, dgrad, wgrad
  EXPECT_EQ(op_of(fp8, "logits_fwd").dtype, DType::bf16);
  EXPECT_EQ(op_of(fp8, "attn_fwd").dtype, DType::bf16);
  // The MLP's down projection on this tp 2 rank: its input is tokens x ffn / 2 in bf16.
  const ModelOp& down = op_of(fp8, "mlp_down_fp8_cast_input_fwd");
  EXPECT_EQ(down.memory.bytes, fp8.facts.tokens * (14336 / 2) * 2);
  EXPECT_EQ(down.calls_per_step, op_of(fp8, "mlp_down_fwd").calls_per_step);
}

// Megatron's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split
// (Megatron-Bridge's Llama 3.1 405B recipe): 126 layers + embedding + loss = 128 over pp 8, 16 a
// stage: 15 layers on the first and the last, 16 between; without them the split is 16 x 6, 15 x 2.
TEST(WorkloadShapes, EmbeddingAndLossCountedAsPipelineLayers) {
  const ModelSpec m = find_preset("llama3-405b");
  ASSERT_EQ(m.layers, 126);
  ParallelLayout l = layout(8, 8, 1);
  l.account_embedding = l.account_loss = true;
  int64_t total = 0;
  for (int64_t stage = 0; stage < 8; ++stage) {
    l.pp_stage = stage;
    const StepFacts f = derive_facts(m, l);
    SCOPED_TRACE(stage);
    EXPECT_EQ(f.layer_end - f.layer_begin, stage == 0 || stage == 7 ? 15 : 16);
    EXPECT_EQ(f.stage_slots, 16);
    EXPECT_EQ(f.layer_begin, total);
    total += f.layer_end - f.layer_begin;
  }
  EXPECT_EQ(total, 126);
  l.pp_stage = -1;
  l.account_loss = false;  // 127 does not split over 8
  const std::string why = usage_error_of([&] { derive_facts(m, l); });
  EXPECT_NE(why.find("(127) do not split evenly"), std::string::npos) << why;
  l.account_embedding = false;
  EXPECT_EQ(derive_facts(m, l).layer_end - derive_facts(m, l).layer_begin, 15);  // the last of 16 x 6, 15 x 2
  EXPECT_EQ(derive_facts(m, l).stage_slots, 15);
}

// Llama-3 70B at TP = 8: 64 query heads, 8 kv heads, head dim 128, hidden 8192, FFN 28672.
TEST(WorkloadShapes, Llama3_70B_TP8) {
  ParallelLayout l = layout(8, 1, 2);
  l.global_batch = 16;  // 16 / (1 x 2) = 8 micro-batches
  const Workload w = derive_workload(find_preset("llama3-70b"), l);
  const int64_t T = 8192;  // micro-batch 1 x seq 8192
  EXPECT_EQ(w.facts.tokens, T);
  EXPECT_EQ(w.facts.micro_batches, 8);
  // QKV: (64/8 + 2 x 8/8) x 128 = 1280 outputs per rank from 8192 inputs.
  expect_gemm(op_of(w, "qkv_fwd"), 1280, T, 8192, 1, "TN");
  expect_gemm(op_of(w, "qkv_dgrad"), 8192, T, 1280, 1, "NN");
  expect_gemm(op_of(w, "qkv_wgrad"), 8192, 1280, T, 1, "NT");
  EXPECT_EQ(op_of(w, "qkv_wgrad").gemm.beta, 1.0);
  EXPECT_EQ(op_of(w, "qkv_wgrad").gemm.out_dtype, DType::fp32);
  EXPECT_EQ(op_of(w, "qkv_fwd").gemm.out_dtype, DType::bf16);
  // Attention output: 64/8 x 128 = 1024 -> 8192. MLP: 28672 / 8 = 3584 for gate and up.
  expect_gemm(op_of(w, "attn_out_fwd"), 8192, T, 1024, 1, "TN");
  expect_gemm(op_of(w, "mlp_gate_fwd"), 3584, T, 8192, 1, "TN");
  expect_gemm(op_of(w, "mlp_up_fwd"), 3584, T, 8192, 1, "TN");
  expect_gemm(op_of(w, "mlp_down_fwd"), 8192, T, 3584, 1, "TN");
  expect_gemm(op_of(w, "mlp_down_wgrad"), 3584, 8192, T, 1, "NT");
  // Vocabulary 128256 padded to a multiple of 128 x 8 = 1024: 129024, 16128 per rank.
  EXPECT_EQ(w.facts.vocab_padded, 129024);
  expect_gemm(op_of(w, "logits_fwd"), 16128, T, 8192, 1, "TN");
  // Attention: 8 heads, 1 kv head per rank, the whole causal sequence.
  const ModelOp& a = op_of(w, "attn_fwd");
  EXPECT_EQ(a.attention.heads, 8);
  EXPECT_EQ(a.attention.kv_heads, 1);
  EXPECT_EQ(a.attention.head_dim, 128);
  EXPECT_EQ(a.attention.seq_q, 8192);
  EXPECT_EQ(a.attention.seq_kv, 8192);
  EXPECT_TRUE(a.attention.causal);
  EXPECT_EQ(op_of(w, "attn_bwd").attention.pass, "bwd");
  // Calls: 80 layers x 8 micro-batches; the logits once per micro-batch.
  EXPECT_EQ(op_of(w, "qkv_fwd").calls_per_step, 640);
  EXPECT_EQ(op_of(w, "attn_bwd").calls_per_step, 640);
  EXPECT_EQ(op_of(w, "logits_wgrad").calls_per_step, 8);
  EXPECT_EQ(op_of(w, "attn_norm_fwd").calls_per_step, 640);
  EXPECT_EQ(op_of(w, "residual_fwd").calls_per_step, 2 * 640);
  EXPECT_EQ(op_of(w, "optimizer_step").calls_per_step, 1);
  // Memory-bound ops without sequence parallelism: all T rows; SwiGLU over 3584 columns.
  EXPECT_EQ(op_of(w, "attn_norm_fwd").memory.kernel, "rmsnorm_fwd");
  EXPECT_EQ(op_of(w, "attn_norm_fwd").memory.rows, T);
  EXPECT_EQ(op_of(w, "mlp_act_fwd").memory.kernel, "swiglu_fwd");
  EXPECT_EQ(op_of(w, "mlp_act_fwd").memory.cols, 3584);
  EXPECT_EQ(op_of(w, "cross_entropy_fwd").memory.cols, 16128);
  // Parameters per rank: per layer 8192 x 1280 + 1024 x 8192 + 3 x 8192 x 3584 + 2 x 8192
  // = 106,971,136; x 80, plus embedding and logits 16128 x 8192 each and the final norm.
  EXPECT_EQ(w.dense_params, 80 * 106971136LL + 2 * 16128LL * 8192 + 8192);
  EXPECT_EQ(w.expert_params, 0);
}

// GPT-3 175B at TP = 8 with sequence parallelism, PP = 8 (the last stage), DP = 4.
TEST(WorkloadShapes, Gpt3_175B_TP8_SP_PP8) {
  ParallelLayout l = layout(8, 8, 4);
  l.sp = true;
  l.micro_batch = 2;
  l.global_batch = 64;  // 64 / (2 x 4) = 8 micro-batches
  const Workload w = derive_workload(find_preset("gpt3-175b"), l);
  const int64_t T = 2 * 2048;
  EXPECT_EQ(w.facts.stage, 7);
  EXPECT_EQ(w.facts.layer_begin, 84);
  EXPECT_EQ(w.facts.layer_end, 96);
  EXPECT_EQ(w.facts.tokens_sp, T / 8);
  // QKV: 3 x 96/8 x 128 = 4608 outputs; a GELU MLP of 4 x 12288 / 8 = 6144 (no gate).
  expect_gemm(op_of(w, "qkv_fwd"), 4608, T, 12288, 1, "TN");
  expect_gemm(op_of(w, "mlp_up_fwd"), 6144, T, 12288, 1, "TN");
  EXPECT_FALSE(has(w, "mlp_gate_fwd"));
  EXPECT_EQ(op_of(w, "mlp_act_fwd").memory.kernel, "gelu_fwd");
  EXPECT_EQ(op_of(w, "attn_norm_bwd").memory.kernel, "layernorm_bwd");
  EXPECT_EQ(op_of(w, "attn_norm_bwd").memory.rows, T / 8);  // sequence parallel rows
  // 50257 padded to a multiple of 1024: 51200; 6400 per rank.
  expect_gemm(op_of(w, "logits_dgrad"), 12288, T, 6400, 1, "NN");
  // 12 layers x 8 micro-batches.
  EXPECT_EQ(op_of(w, "qkv_dgrad").calls_per_step, 96);
  // The last stage receives activations and sends their gradients: T / tp x 12288 x 2 bytes.
  EXPECT_EQ(op_of(w, "pp_recv_fwd").comm.size_bytes, 512LL * 12288 * 2);
  EXPECT_EQ(op_of(w, "pp_send_bwd").calls_per_step, 8);
  EXPECT_FALSE(has(w, "pp_send_fwd"));
  EXPECT_EQ(op_of(w, "pp_recv_fwd").comm.collective, "sendrecv");
  EXPECT_FALSE(has(w, "embed_tp_reducescatter_fwd"));  // the embedding is on the first stage
  EXPECT_EQ(op_of(w, "logits_tp_allgather_fwd").comm.size_bytes, T * 12288LL * 2);
  // Tied embeddings over pp > 1: the last stage's copy's gradient all-reduced with the first.
  EXPECT_EQ(op_of(w, "embedding_allreduce_grad").comm.size_bytes, 6400LL * 12288 * 4);
  EXPECT_EQ(op_of(w, "embedding_allreduce_grad").comm.group_size, 2);
}

// Per-step call counts of tensor-parallel communication, with and without sp.
TEST(WorkloadShapes, TensorParallelMessages) {
  ParallelLayout l = layout(2);
  l.seq = 1024;
  l.global_batch = 3;  // 3 micro-batches
  const ModelSpec& m = find_preset("llama3-8b");
  const Workload plain = derive_workload(m, l);
  const int64_t act = 1024LL * 4096 * 2;  // T x hidden x bf16
  // Two all-reduces per layer and direction (attention output / MLP down; QKV / MLP up input
  // gradients): 2 x 32 layers x 3 micro-batches.
  EXPECT_EQ(op_of(plain, "tp_allreduce_fwd").calls_per_step, 192);
  EXPECT_EQ(op_of(plain, "tp_allreduce_bwd").calls_per_step, 192);
  EXPECT_EQ(op_of(plain, "tp_allreduce_fwd").comm.size_bytes, act);
  EXPECT_EQ(op_of(plain, "tp_allreduce_fwd").comm.group_size, 2);
  EXPECT_EQ(op_of(plain, "xent_tp_allreduce_fwd").comm.size_bytes, 1024 * 4);
  EXPECT_EQ(op_of(plain, "xent_tp_allreduce_fwd").calls_per_step, 9);
  l.sp = true;
  const Workload sp = derive_workload(m, l);
  EXPECT_FALSE(has(sp, "tp_allreduce_fwd"));
  EXPECT_EQ(op_of(sp, "tp_allgather_fwd").calls_per_step, 192);
  EXPECT_EQ(op_of(sp, "tp_reducescatter_fwd").calls_per_step, 192);
  EXPECT_EQ(op_of(sp, "tp_allgather_bwd").calls_per_step, 384);  // gradient, and the input again for wgrad
  EXPECT_EQ(op_of(sp, "tp_reducescatter_bwd").comm.size_bytes, act);
  // Norm weights of 32 layers (2 x 4096) and the final norm, fp32 gradients.
  EXPECT_EQ(op_of(sp, "tp_allreduce_sp_grads").comm.size_bytes, (32LL * 2 * 4096 + 4096) * 4);
}

TEST(WorkloadShapes, GroupsMergeEqualShapes) {
  const Workload w = derive_workload(find_preset("llama3-70b"), layout(8));
  const auto groups = group_ops(w.ops, "gemm");
  bool found = false;
  for (const auto& g : groups)
    if (g.op.role == "mlp_gate_fwd+mlp_up_fwd") {
      found = true;
      EXPECT_EQ(g.op.calls_per_step, 160);  // two GEMMs x 80 layers
      EXPECT_EQ(g.roles.size(), 2u);
    }
  EXPECT_TRUE(found);
  // Every op of a bench lands in exactly one group; calls are conserved.
  int64_t calls = 0, grouped = 0;
  for (const auto& o : w.ops) calls += o.bench() == "gemm" ? o.calls_per_step : 0;
  for (const auto& g : groups) grouped += g.op.calls_per_step;
  EXPECT_EQ(calls, grouped);
}

TEST(WorkloadShapes, ScaleDividesWidthsOnly) {
  ParallelLayout l = layout(2);
  l.scale = 4;
  l.seq = 512;
  const Workload w = derive_workload(find_preset("llama3-8b"), l);
  EXPECT_EQ(w.model.hidden, 1024);
  EXPECT_EQ(w.model.head_dim, 32);
  EXPECT_EQ(w.model.heads, 32);
  EXPECT_EQ(w.model.kv_heads, 8);
  EXPECT_EQ(w.model.layers, 32);
  // QKV: (16 + 2 x 4) heads x 32 = 768 from 1024; the MLP 14336 / 4 / 2 = 1792.
  expect_gemm(op_of(w, "qkv_fwd"), 768, 512, 1024, 1, "TN");
  expect_gemm(op_of(w, "mlp_up_fwd"), 1792, 512, 1024, 1, "TN");
  EXPECT_EQ(w.model.vocab, 32064);
  l.scale = 3;
  EXPECT_THROW(derive_workload(find_preset("llama3-8b"), l), UsageError);
  l.scale = 1;
  l.layers = 2;
  const Workload sub = derive_workload(find_preset("llama3-8b"), l);
  EXPECT_EQ(op_of(sub, "qkv_fwd").calls_per_step, 2);
}

}  // namespace
}  // namespace gpucal::model
