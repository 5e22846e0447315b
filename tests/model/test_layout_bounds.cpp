// The bounds of model and layout fields and the overflow-checked derivation: a value above
// its bound, or a combination whose products leave int64, is one UsageError line, never a
// wrapped (negative) size, count or time; large in-bound layouts derive exact positive values.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>

#include "core/errors.h"
#include "core/model/bounds.h"
#include "core/model/workload.h"
#include "tests/model/usage_error_of.h"

namespace gpucal::model {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Every size, count and FLOP figure of the step is positive (no wrapped value).
void expect_all_positive(const Workload& w) {
  EXPECT_GT(w.facts.tokens, 0);
  EXPECT_GT(w.dense_params, 0);
  for (const auto& op : w.ops) {
    EXPECT_GT(op.calls_per_step, 0) << op.role;
    if (op.kind == OpKind::gemm) {
      EXPECT_GT(op.gemm.m, 0) << op.role;
      EXPECT_GT(op.gemm.n, 0) << op.role;
      EXPECT_GT(op.gemm.k, 0) << op.role;
      EXPECT_GT(op.flops(), 0) << op.role;
    }
    if (op.kind == OpKind::collective || op.kind == OpKind::p2p) EXPECT_GT(op.comm.size_bytes, 0) << op.role;
    if (op.kind == OpKind::memory) {
      EXPECT_GE(op.memory.rows, 0) << op.role;
      EXPECT_GE(op.memory.bytes, 0) << op.role;
    }
  }
}

TEST(Bounds, CheckedArithmetic) {
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31, "x"), int64_t{1} << 62);
  EXPECT_EQ(checked_add(kMax - 1, 1, "x"), kMax);
  EXPECT_EQ(checked_product({2, 3, 7}, "x"), 42);
  EXPECT_NE(
      usage_error_of([] { checked_mul(int64_t{1} << 32, int64_t{1} << 31, "bytes"); }).find("bytes overflows"),
      std::string::npos);
  EXPECT_NE(usage_error_of([] { checked_add(kMax, 1, "params"); }), "");
  EXPECT_NE(usage_error_of([] { checked_product({kMax, 2}, "calls"); }), "");
}

TEST(Bounds, LayoutFieldsAboveTheirBoundAreOneLine) {
  const ModelSpec& llama = find_preset("llama3-8b");
  auto derive = [&](auto edit) {
    return usage_error_of([&] {
      ParallelLayout l;
      edit(l);
      derive_workload(llama, l);
    });
  };
  EXPECT_EQ(derive([](ParallelLayout& l) { l.micro_batch = kMax; }),
            "--micro-batch: expected at most 1048576, got 9223372036854775807");
  EXPECT_EQ(derive([](ParallelLayout& l) { l.dp = int64_t{1} << 62; }),
            "--dp: expected at most 1048576, got 4611686018427387904");
  EXPECT_NE(derive([](ParallelLayout& l) { l.seq = int64_t{1} << 40; }).find("--seq: expected"),
            std::string::npos);
  EXPECT_NE(derive([](ParallelLayout& l) { l.global_batch = kMax; }).find("--global-batch"),
            std::string::npos);
  EXPECT_NE(derive([](ParallelLayout& l) { l.layers = kMax; }).find("--layers"), std::string::npos);
  EXPECT_NE(derive([](ParallelLayout& l) { l.scale = kMax; }).find("--scale"), std::string::npos);
  EXPECT_NE(derive([](ParallelLayout& l) { l.dp_bucket_params = kMax; }).find("--dp-bucket-params"),
            std::string::npos);
  // Each factor within its bound, their product (the world size) not.
  EXPECT_NE(derive([](ParallelLayout& l) { l.tp = l.pp = l.dp = l.cp = 1 << 10; }).find("ranks"),
            std::string::npos);
}

TEST(Bounds, ModelFieldsAboveTheirBoundAreOneLine) {
  nlohmann::json doc = {{"name", "big"}, {"layers", 2},     {"hidden", int64_t{1} << 62},
                        {"heads", 32},   {"head_dim", 128}, {"ffn", 14336},
                        {"seq", 8192}};
  EXPECT_NE(usage_error_of([&] { model_from_json(doc, "big.json"); }).find("hidden must be at most 1048576"),
            std::string::npos);
  doc["hidden"] = 4096;
  doc["layers"] = int64_t{10000000000};  // once a 30 s loop over the layers
  EXPECT_NE(usage_error_of([&] { model_from_json(doc, "deep.json"); }).find("layers must be at most 10000"),
            std::string::npos);
  doc["layers"] = 2;
  EXPECT_EQ(usage_error_of([&] { model_from_json(doc, "ok.json"); }), "");
  for (const ModelSpec& p : presets()) EXPECT_EQ(usage_error_of([&] { check_bounds(p); }), "") << p.name;
}

// Within every field's bound, products that leave int64 are refused by the checked arithmetic.
TEST(Bounds, ProductsOverflowingInt64AreRefused) {
  ModelSpec wide;
  wide.name = "wide-moe";
  wide.layers = 1;
  wide.hidden = limits::kWidth;
  wide.heads = wide.kv_heads = 16;
  wide.head_dim = 64;
  wide.ffn = 1024;
  wide.seq = limits::kSeq;
  wide.experts = wide.top_k = limits::kHeads;
  wide.expert_ffn = 1024;
  validate(wide);
  ParallelLayout l;
  l.micro_batch = limits::kMicroBatch;  // 2^44 tokens, x 2^16 routed x 2^20 hidden x 4 bytes
  l.dtype = DType::fp32;
  EXPECT_NE(usage_error_of([&] { derive_workload(wide, l); }).find("overflows 64-bit integers"),
            std::string::npos);

  // Calls per step: 10000 layers x 2^30 micro-batches x cp 2^20.
  ModelSpec deep = find_preset("llama3-8b");
  deep.layers = limits::kLayers;
  ParallelLayout c;
  c.seq = limits::kSeq;
  c.cp = 1 << 20;
  c.global_batch = limits::kGlobalBatch;
  EXPECT_NE(usage_error_of([&] { derive_workload(deep, c); }).find("calls per step"), std::string::npos);
}

TEST(Bounds, LargeInBoundLayoutsDeriveExactPositiveValues) {
  ParallelLayout l;
  l.micro_batch = 1024;
  l.seq = 131072;
  l.tp = 8;
  l.sp = true;
  l.dp = 64;
  l.global_batch = 1 << 20;
  const Workload w = derive_workload(find_preset("llama3-405b"), l);
  EXPECT_EQ(w.facts.tokens, int64_t{1024} * 131072);
  EXPECT_EQ(w.facts.micro_batches, (1 << 20) / (1024 * 64));
  expect_all_positive(w);
  ParallelLayout m;
  m.micro_batch = 64;
  m.seq = 65536;
  m.ep = 8;
  m.dp = 8;
  m.tp = 2;
  m.sp = true;
  expect_all_positive(derive_workload(find_preset("deepseek-v3"), m));
}

}  // namespace
}  // namespace gpucal::model
