// FLOP conventions: the FA2 causal halving, top-left causal with s_q != s_kv, the FA3 formula,
// and the backward / forward+backward factors.
#include <gtest/gtest.h>

#include "core/formulas/attention_flops.h"
#include "bench_attention/attention_problem.h"
#include "core/errors.h"

using namespace gpucal;
using namespace gpucal::attention;

TEST(AttentionFlops, Fa2ForwardAndCausalHalving) {
  const FlopShape s{4, 16, 4096, 4096, 128, false};
  EXPECT_DOUBLE_EQ(attention_forward_flops(s, FlopConvention::fa2), 4.0 * 4 * 16 * 4096 * 4096 * 128);
  FlopShape c = s;
  c.causal = true;
  EXPECT_DOUBLE_EQ(attention_forward_flops(c, FlopConvention::fa2), attention_forward_flops(s, FlopConvention::fa2) / 2);
}

TEST(AttentionFlops, Fa2CausalTopLeftUnequalLengths) {
  // s_q < s_kv: query i sees keys 0..i, the area under the diagonal is s_q²/2 (fraction 1/8 here).
  const FlopShape a{1, 2, 128, 512, 64, true};
  EXPECT_DOUBLE_EQ(attention_forward_flops(a, FlopConvention::fa2), 4.0 * 2 * 64 * (128.0 * 128 / 2));
  EXPECT_DOUBLE_EQ(attention_forward_flops(a, FlopConvention::fa2) /
                       attention_forward_flops({1, 2, 128, 512, 64, false}, FlopConvention::fa2),
                   1.0 / 8);
  // s_q > s_kv: the first s_kv rows form the triangle, the remaining rows see every key (7/8).
  const FlopShape b{1, 2, 512, 128, 64, true};
  EXPECT_DOUBLE_EQ(attention_forward_flops(b, FlopConvention::fa2), 4.0 * 2 * 64 * (128.0 * 128 / 2 + 384.0 * 128));
  EXPECT_DOUBLE_EQ(attention_forward_flops(b, FlopConvention::fa2) /
                       attention_forward_flops({1, 2, 512, 128, 64, false}, FlopConvention::fa2),
                   7.0 / 8);
}

TEST(AttentionFlops, DiscreteVisiblePairsDifferByTheDiagonal) {
  EXPECT_DOUBLE_EQ(causal_visible_pairs(4, 4), 10);     // 1+2+3+4
  EXPECT_DOUBLE_EQ(causal_visible_pairs(2, 5), 3);      // 1+2
  EXPECT_DOUBLE_EQ(causal_visible_pairs(5, 2), 9);      // 1+2+2+2+2
  // The convention's area is the discrete count minus half the diagonal.
  for (auto [sq, skv] : {std::pair<int64_t, int64_t>{64, 64}, {32, 96}, {96, 32}}) {
    const double area = attention_forward_flops({1, 1, sq, skv, 1, true}, FlopConvention::fa2) / 4;
    EXPECT_DOUBLE_EQ(causal_visible_pairs(sq, skv) - area, static_cast<double>(std::min(sq, skv)) / 2);
  }
}

TEST(AttentionFlops, Fa3Convention) {
  const FlopShape s{2, 8, 1024, 1024, 128, false};
  // Without a mask both conventions agree: 2·b·h·s_q·s_kv·(d + d_v) = 4·b·h·s_q·s_kv·d.
  EXPECT_DOUBLE_EQ(attention_forward_flops(s, FlopConvention::fa3), attention_forward_flops(s, FlopConvention::fa2));
  FlopShape c = s;
  c.causal = true;
  EXPECT_DOUBLE_EQ(attention_forward_flops(c, FlopConvention::fa3), 2.0 * 2 * 8 * 1024 * 512 * 256);
  // FA3's avg_s_k = (max(0, s_k - s_q) + s_k) / 2 (bottom-right alignment).
  const FlopShape u{1, 1, 128, 512, 64, true};
  EXPECT_DOUBLE_EQ(attention_forward_flops(u, FlopConvention::fa3), 2.0 * 128 * ((384.0 + 512) / 2) * 128);
  const FlopShape w{1, 1, 512, 128, 64, true};
  EXPECT_DOUBLE_EQ(attention_forward_flops(w, FlopConvention::fa3), 2.0 * 512 * (128.0 / 2) * 128);
}

TEST(AttentionFlops, PassFactors) {
  const FlopShape s{1, 4, 256, 256, 64, true};
  const double f = attention_forward_flops(s, FlopConvention::fa2);
  EXPECT_DOUBLE_EQ(attention_flops(s, AttnPass::fwd, FlopConvention::fa2), f);
  EXPECT_DOUBLE_EQ(attention_flops(s, AttnPass::bwd, FlopConvention::fa2), 2.5 * f);
  EXPECT_DOUBLE_EQ(attention_flops(s, AttnPass::fwdbwd, FlopConvention::fa2), 3.5 * f);
  EXPECT_DOUBLE_EQ(attention_flops(s, AttnPass::bwd, FlopConvention::fa3),
                   2.5 * attention_forward_flops(s, FlopConvention::fa3));
}

TEST(AttentionProblem, PointKeyCellsAndValidation) {
  auto p = make_problem(DType::bf16, AttnPass::fwd, FlopConvention::fa2, "BSHD", 4, 16, 16, 4096, 4096, 128, false);
  EXPECT_EQ(p.point("flash", "cold"), "attention/flash/bf16/fwd/BSHD/b4/h16/kv16/sq4096/skv4096/d128/causal0/cold");
  Row row;
  p.describe(row);
  EXPECT_EQ(row.get("flop_convention"), "fa2");
  EXPECT_EQ(row.get("kv_heads"), "16");
  EXPECT_EQ(row.get("causal"), "0");
  EXPECT_EQ(p.shape.dtype, AttnDtype::bf16);
  // bwd touches dO, dQ, dK, dV as well.
  auto b = make_problem(DType::fp32, AttnPass::bwd, FlopConvention::fa3, "BHSD", 1, 4, 2, 8, 16, 32, true);
  EXPECT_EQ(b.tensor_bytes(), 4u * (4 * (4 * 8 * 32) + 4 * (2 * 16 * 32)) + 4u * (4 * 8));
  EXPECT_THROW(make_problem(DType::fp32, AttnPass::fwd, FlopConvention::fa2, "BSHD", 1, 6, 4, 8, 8, 32, false),
               UsageError);
  EXPECT_THROW(make_problem(DType::fp32, AttnPass::fwd, FlopConvention::fa2, "SBHD", 1, 4, 4, 8, 8, 32, false),
               UsageError);
  EXPECT_THROW(parse_pass("backward"), UsageError);
  EXPECT_THROW(parse_flop_convention("fa4"), UsageError);
}

TEST(AttentionProblem, TolerancesScaleWithDtype) {
  auto tol = [](DType t) {
    return tolerances(make_problem(t, AttnPass::bwd, FlopConvention::fa2, "BSHD", 1, 1, 1, 4096, 4096, 128, false));
  };
  EXPECT_LT(tol(DType::fp64).out, 1e-12);
  EXPECT_LT(tol(DType::fp32).out, 1e-4);
  EXPECT_GT(tol(DType::bf16).out, tol(DType::fp16).out);
  EXPECT_LT(tol(DType::bf16).grad, 0.05);  // still far below an O(1) error
}
