// Message sizes per parallel dimension, MoE routing, context parallelism and MLA, checked
// against hand-computed numbers; and the bad-input one-liners of layouts and model files.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "core/errors.h"
#include "core/model/workload.h"
#include "tests/model/usage_error_of.h"

namespace gpucal::model {
namespace {

std::vector<const ModelOp*> ops(const Workload& w, const std::string& role) {
  std::vector<const ModelOp*> out;
  for (const auto& o : w.ops)
    if (o.role == role) out.push_back(&o);
  return out;
}

const ModelOp& op(const Workload& w, const std::string& role) {
  const auto all = ops(w, role);
  if (all.empty()) throw std::runtime_error("no op with role " + role);
  return *all.front();
}

// Bytes a role moves per step: sum of size x calls.
int64_t bytes_per_step(const Workload& w, const std::string& role) {
  int64_t total = 0;
  for (const ModelOp* o : ops(w, role)) total += o->comm.size_bytes * o->calls_per_step;
  return total;
}

ParallelLayout base(int64_t tp, int64_t dp) {
  ParallelLayout l;
  l.tp = tp;
  l.dp = dp;
  return l;
}

// Llama-3 70B, TP 8, DP 2: 8,821,940,224 parameters per rank (test_workload_shapes.cpp).
constexpr int64_t kLlama70Tp8Params = 80 * 106971136LL + 2 * 16128LL * 8192 + 8192;

TEST(WorkloadComm, DataParallelGradientBytesAreParametersTimesElementSize) {
  ParallelLayout l = base(8, 2);
  const Workload ddp = derive_workload(find_preset("llama3-70b"), l);
  ASSERT_EQ(ddp.dense_params, kLlama70Tp8Params);
  // bf16 training reduces fp32 gradients (Megatron): 4 bytes each; 40M-parameter buckets.
  EXPECT_EQ(bytes_per_step(ddp, "dp_allreduce_grad"), kLlama70Tp8Params * 4);
  // 220 full buckets of 40,000,000 parameters and one of the remaining 21,940,224.
  const auto buckets = ops(ddp, "dp_allreduce_grad");
  ASSERT_EQ(buckets.size(), 2u);
  for (const ModelOp* o : buckets) {
    EXPECT_EQ(o->dtype, DType::fp32);
    EXPECT_EQ(o->comm.group_size, 2);
    if (o->calls_per_step == 220)
      EXPECT_EQ(o->comm.size_bytes, 40000000LL * 4);
    else
      EXPECT_EQ(o->comm.size_bytes, 21940224LL * 4);
  }

  l.zero = 1;  // distributed optimizer: reduce-scatter gradients, all-gather bf16 parameters
  const Workload zero1 = derive_workload(find_preset("llama3-70b"), l);
  EXPECT_EQ(bytes_per_step(zero1, "dp_reducescatter_grad"), kLlama70Tp8Params * 4);
  EXPECT_EQ(bytes_per_step(zero1, "dp_allgather_param"), kLlama70Tp8Params * 2);
  EXPECT_TRUE(ops(zero1, "dp_allreduce_grad").empty());
  EXPECT_EQ(op(zero1, "optimizer_step").memory.params, kLlama70Tp8Params / 2);
  EXPECT_EQ(op(zero1, "grad_norm").memory.bytes, kLlama70Tp8Params / 2 * 4);
  EXPECT_EQ(op(ddp, "optimizer_step").memory.params, kLlama70Tp8Params);

  l.dp_bucket_params = 0;  // one bucket
  const Workload one = derive_workload(find_preset("llama3-70b"), l);
  ASSERT_EQ(ops(one, "dp_reducescatter_grad").size(), 1u);
  EXPECT_EQ(op(one, "dp_reducescatter_grad").comm.size_bytes, kLlama70Tp8Params * 4);
  EXPECT_EQ(op(one, "dp_reducescatter_grad").calls_per_step, 1);

  // Megatron's default bucket grows with dp x cp: max(40M, 1M x 64).
  ParallelLayout big = base(8, 64);
  EXPECT_EQ(derive_workload(find_preset("llama3-70b"), big).facts.dp_bucket_params, 64000000);
}

TEST(WorkloadComm, ZeroThreeGathersEachLayerEveryMicroBatch) {
  ParallelLayout l = base(8, 2);
  l.zero = 3;
  l.global_batch = 8;  // 4 micro-batches
  const Workload w = derive_workload(find_preset("llama3-70b"), l);
  const auto fwd = ops(w, "zero3_allgather_param_fwd");
  ASSERT_EQ(fwd.size(), 2u);  // the 80 identical layers, and the embedding/head unit
  int64_t layer_calls = 0, extra_calls = 0;
  for (const ModelOp* o : fwd) {
    if (o->comm.size_bytes == 106971136LL * 2) layer_calls = o->calls_per_step;
    if (o->comm.size_bytes == (2 * 16128LL * 8192 + 8192) * 2) extra_calls = o->calls_per_step;
  }
  EXPECT_EQ(layer_calls, 80 * 4);
  EXPECT_EQ(extra_calls, 4);
  EXPECT_EQ(bytes_per_step(w, "zero3_reducescatter_grad"), kLlama70Tp8Params * 4 * 4);
  EXPECT_EQ(bytes_per_step(w, "zero3_allgather_param_bwd"), kLlama70Tp8Params * 2 * 4);
  EXPECT_TRUE(ops(w, "dp_allreduce_grad").empty());
}

TEST(WorkloadComm, ContextParallelRingAndAttention) {
  ParallelLayout l = base(1, 1);
  l.cp = 2;
  const Workload w = derive_workload(find_preset("llama3-8b"), l);
  // seq 8192 over cp 2: 4096 tokens; causal: the own chunk causal, one more step unmasked
  // against half a chunk.
  EXPECT_EQ(w.facts.tokens, 4096);
  EXPECT_EQ(op(w, "attn_fwd").attention.seq_q, 4096);
  EXPECT_TRUE(op(w, "attn_fwd").attention.causal);
  EXPECT_EQ(op(w, "attn_cp_step_fwd").attention.seq_kv, 2048);
  EXPECT_FALSE(op(w, "attn_cp_step_fwd").attention.causal);
  EXPECT_EQ(op(w, "attn_cp_step_bwd").calls_per_step, 32);
  // K and V of 4096 tokens x 8 kv heads x 128 x bf16, once per layer (cp - 1 = 1).
  EXPECT_EQ(op(w, "cp_ring_fwd").comm.size_bytes, 4096LL * 8 * (128 + 128) * 2);
  EXPECT_EQ(op(w, "cp_ring_fwd").comm.collective, "ring");
  EXPECT_EQ(op(w, "cp_ring_bwd").comm.size_bytes, 2 * 4096LL * 8 * 256 * 2);
  EXPECT_EQ(op(w, "cp_ring_bwd").calls_per_step, 32);
  // Gradients are reduced over dp x cp = 2 ranks even with dp = 1.
  EXPECT_EQ(op(w, "dp_allreduce_grad").comm.group_size, 2);
  // Whole attention work per rank is 1/cp of the sequence's: causal s^2/2 over cp ranks.
  const double full = 4.0 * 32 * 128 * (8192.0 * 8192.0 / 2);
  EXPECT_DOUBLE_EQ(op(w, "attn_fwd").flops() + op(w, "attn_cp_step_fwd").flops(), full / 2);

  // The long-sequence ViT, non-causal, cp 4: four unmasked 16200 x 16200 steps.
  ParallelLayout v = base(1, 1);
  v.cp = 4;
  const Workload vit = derive_workload(find_preset("vit-era5"), v);
  EXPECT_EQ(op(vit, "attn_fwd").attention.seq_q, 16200);
  EXPECT_FALSE(op(vit, "attn_fwd").attention.causal);
  EXPECT_EQ(op(vit, "attn_cp_step_fwd").attention.seq_kv, 16200);
  EXPECT_EQ(op(vit, "attn_cp_step_fwd").calls_per_step, 3 * 48);
  EXPECT_EQ(op(vit, "attn_fwd").attention.head_dim, 192);
  EXPECT_TRUE(ops(vit, "logits_fwd").empty());
}

TEST(WorkloadComm, MixtralExpertsAndAllToAll) {
  ParallelLayout l = base(2, 4);
  l.sp = true;
  l.ep = 4;
  l.seq = 4096;
  const Workload w = derive_workload(find_preset("mixtral-8x7b"), l);
  // 4096 tokens x top-2 x ep 4 / 8 experts = 4096 per expert; 2 experts per rank.
  EXPECT_EQ(w.facts.tokens_per_expert, 4096);
  EXPECT_EQ(w.facts.local_experts, 2);
  const ModelOp& up = op(w, "expert_up_fwd");
  EXPECT_EQ(up.gemm.m, 14336 / 2);
  EXPECT_EQ(up.gemm.n, 4096);
  EXPECT_EQ(up.gemm.k, 4096);
  EXPECT_EQ(up.gemm.batch, 2);
  EXPECT_EQ(op(w, "router_fwd").gemm.m, 8);
  EXPECT_EQ(op(w, "router_fwd").gemm.n, 2048);  // the sequence-parallel shard
  // All-to-all: the rank's 2048 tokens x 2 copies x 4096 x bf16.
  EXPECT_EQ(op(w, "ep_alltoall_dispatch_fwd").comm.size_bytes, 2048LL * 2 * 4096 * 2);
  EXPECT_EQ(op(w, "ep_alltoall_dispatch_fwd").comm.group_size, 4);
  EXPECT_EQ(op(w, "ep_alltoall_combine_bwd").calls_per_step, 32);
  EXPECT_FALSE(op(w, "ep_alltoall_dispatch_fwd").comm.in_place);
  EXPECT_EQ(op(w, "moe_tp_allgather_fwd").comm.size_bytes, 4096LL * 2 * 4096 * 2);
  // Experts: 32 layers x 2 x 3 x 4096 x 7168; reduced over dp x cp / ep = 1: no message.
  EXPECT_EQ(w.expert_params, 32LL * 2 * 3 * 4096 * 7168);
  EXPECT_TRUE(ops(w, "dp_expert_allreduce_grad").empty());
  EXPECT_FALSE(ops(w, "dp_allreduce_grad").empty());
  EXPECT_EQ(op(w, "expert_act_fwd").memory.rows, 2 * 4096);

  l.ep = 2;  // experts now reduced over 4 / 2 = 2 ranks
  const Workload w2 = derive_workload(find_preset("mixtral-8x7b"), l);
  EXPECT_EQ(w2.facts.expert_dp_group, 2);
  EXPECT_EQ(bytes_per_step(w2, "dp_expert_allreduce_grad"), w2.expert_params * 4);

  // Uneven routing is rounded up: 4095 x 2 / 8 = 1023.75 -> 1024.
  ParallelLayout odd = base(1, 1);
  odd.seq = 4095;
  EXPECT_EQ(derive_workload(find_preset("mixtral-8x7b"), odd).facts.tokens_per_expert, 1024);
}

TEST(WorkloadComm, DeepSeekV3LatentAttentionAndSharedExperts) {
  ParallelLayout l = base(8, 8);
  l.sp = true;
  l.ep = 8;
  const Workload w = derive_workload(find_preset("deepseek-v3"), l);
  EXPECT_EQ(w.facts.dense_layers, 3);
  EXPECT_EQ(w.facts.moe_layers, 58);
  // 4096 tokens x 8 x 8 / 256 = 1024 tokens per expert, 32 experts per rank.
  EXPECT_EQ(w.facts.tokens_per_expert, 1024);
  EXPECT_EQ(op(w, "expert_up_fwd").gemm.batch, 32);
  EXPECT_EQ(op(w, "expert_up_fwd").gemm.m, 2048 / 8);
  EXPECT_EQ(op(w, "expert_up_fwd").calls_per_step, 58);
  EXPECT_EQ(op(w, "shared_expert_up_fwd").gemm.m, 2048 / 8);
  EXPECT_EQ(op(w, "mlp_up_fwd").gemm.m, 18432 / 8);
  EXPECT_EQ(op(w, "mlp_up_fwd").calls_per_step, 3);
  // MLA: q 7168 -> 1536 -> 16 heads x 192; kv 7168 -> 512 + 64 -> 16 x (128 + 128); out 16 x 128.
  EXPECT_EQ(op(w, "q_down_fwd").gemm.m, 1536);
  EXPECT_EQ(op(w, "q_up_fwd").gemm.m, 16 * 192);
  EXPECT_EQ(op(w, "q_up_fwd").gemm.k, 1536);
  EXPECT_EQ(op(w, "kv_down_fwd").gemm.m, 576);
  EXPECT_EQ(op(w, "kv_up_fwd").gemm.m, 16 * 256);
  EXPECT_EQ(op(w, "attn_out_fwd").gemm.k, 16 * 128);
  EXPECT_EQ(op(w, "attn_fwd").attention.head_dim, 192);
  EXPECT_EQ(op(w, "attn_fwd").attention.kv_heads, 16);
  EXPECT_EQ(op(w, "kv_norm_fwd").memory.cols, 512);
  EXPECT_TRUE(ops(w, "qkv_fwd").empty());
}

TEST(WorkloadComm, BadLayoutsAreOneLineErrors) {
  struct Case {
    const char* model;
    std::function<void(ParallelLayout&)> set;
    const char* fragment;
  };
  const std::vector<Case> cases = {
      {"llama3-70b", [](ParallelLayout& l) { l.tp = 16; },
       "--tp 16: kv heads (query groups) (8) is not divisible by 16"},
      {"mixtral-8x7b", [](ParallelLayout& l) { l.tp = 2; }, "needs --sp"},
      {"mixtral-8x7b", [](ParallelLayout& l) { l.ep = 3; }, "--ep 3: experts (8) is not divisible by 3"},
      {"mixtral-8x7b", [](ParallelLayout& l) { l.ep = 8, l.dp = 4; }, "carved out of dp x cp"},
      {"llama3-70b", [](ParallelLayout& l) { l.dp = 2, l.global_batch = 3; },
       "--global-batch 3 is not a multiple"},
      {"llama3-70b", [](ParallelLayout& l) { l.zero = 4; }, "--zero"},
      {"llama3-70b", [](ParallelLayout& l) { l.pp = 100; }, "only 80 layers"},
      {"llama3-70b", [](ParallelLayout& l) { l.pp = 2, l.pp_stage = 2; }, "--pp-stage 2"},
      {"llama3-70b", [](ParallelLayout& l) { l.layers = 81; }, "--layers 81"},
      {"llama3-70b", [](ParallelLayout& l) { l.sp = true; }, "--sp"},
      {"llama3-70b", [](ParallelLayout& l) { l.dtype = DType::fp8_e4m3; }, "bf16, fp16 or fp32"},
      {"llama3-70b", [](ParallelLayout& l) { l.ep = 2; }, "has no experts"},
      {"llama3-70b", [](ParallelLayout& l) { l.cp = 3; }, "2 x cp chunks"},
      {"llama3-70b", [](ParallelLayout& l) { l.tp = 0; }, "--tp: expected at least 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.fragment);
    ParallelLayout l;
    c.set(l);
    try {
      derive_workload(find_preset(c.model), l);
      ADD_FAILURE() << "no error";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.fragment), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

TEST(ModelConfig, JsonIsValidatedFieldByField) {
  const auto parse = [](const char* text) { return model_from_json(nlohmann::json::parse(text), "m.json"); };
  const ModelSpec tiny =
      parse(R"({"name": "tiny", "layers": 2, "hidden": 256, "heads": 4, "ffn": 1024, "seq": 128})");
  EXPECT_EQ(tiny.head_dim, 64);
  EXPECT_EQ(tiny.kv_heads, 4);
  EXPECT_EQ(tiny.norm, "rmsnorm");
  EXPECT_EQ(
      usage_error_of([&] {
        parse(R"({"name": "t", "layers": 2, "hidden": 256, "heads": 4, "ffn": 1, "seq": 8, "hiden": 3})");
      }),
      "m.json: unknown field 'hiden'");
  EXPECT_EQ(usage_error_of([&] { parse(R"({"name": "t", "layers": "2", "hidden": 256, "heads": 4, "seq": 8})"); }),
            "m.json: field 'layers': expected an integer");
  EXPECT_EQ(usage_error_of([&] { parse(R"({"name": "t", "layers": 2, "hidden": 256, "heads": 4})"); }),
            "m.json: missing required field 'seq'");
  EXPECT_EQ(
      usage_error_of([&] {
        parse(R"({"name": "t", "layers": 2, "hidden": 384, "heads": 6, "kv_heads": 4, "ffn": 8, "seq": 8})");
      }),
      "m.json: model 't': heads (6) must be a multiple of kv_heads (4)");
  EXPECT_EQ(usage_error_of([&] { parse(R"({"name": "t", "layers": 2, "hidden": 256, "heads": 4, "seq": 8})"); }),
            "m.json: model 't': ffn must be at least 1 (dense MLP layers exist)");
  EXPECT_EQ(
      usage_error_of([&] {
        parse(R"({"name": "t", "layers": 2, "hidden": 256, "heads": 4, "ffn": 8, "seq": 8, "experts": 4})");
      }),
      "m.json: model 't': top_k must be between 1 and experts (4), got 0");
  EXPECT_EQ(usage_error_of([&] { parse("[1, 2]"); }), "m.json: expected a JSON object of model fields");
  EXPECT_EQ(usage_error_of([] { load_model_config("/nonexistent/model.json"); }),
            "--model-config: cannot read '/nonexistent/model.json'");
  const std::string path = testing::TempDir() + "broken_model.json";
  std::ofstream(path) << "{\"name\": \"x\",";
  const std::string broken = usage_error_of([&] { load_model_config(path); });
  EXPECT_NE(broken.find("not valid JSON"), std::string::npos) << broken;
  EXPECT_EQ(broken.find('\n'), std::string::npos);
  EXPECT_NE(usage_error_of([] { find_preset("llama4"); }).find("presets: gpt3-175b"), std::string::npos);
}

TEST(ModelConfig, PresetsRoundTripThroughJson) {
  for (const ModelSpec& m : presets()) {
    SCOPED_TRACE(m.name);
    EXPECT_FALSE(m.source.empty());
    const ModelSpec back = model_from_json(to_json(m), "roundtrip");
    EXPECT_EQ(to_json(back), to_json(m));
  }
}

}  // namespace
}  // namespace gpucal::model
