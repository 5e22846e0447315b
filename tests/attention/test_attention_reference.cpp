// The fp64 reference against an independent naive computation (whole matrices, explicit
// softmax), its backward against central finite differences of L = Σ O·dO, the host
// implementation end to end through the harness, and the verification sampling plan.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bench_attention/attention_impls.h"
#include "bench_attention/attention_problem.h"
#include "bench_attention/attention_reference.h"
#include "core/backend/element_convert.h"
#include "core/driver/driver.h"

using namespace gpucal;
using namespace gpucal::attention;

namespace {

// Packed BHSD double tensors, filled from a seeded generator.
struct Tiny {
  AttentionParams p;
  std::vector<double> q, k, v, d_o;
  Tiny(int64_t b, int64_t h, int64_t kvh, int64_t sq, int64_t skv, int64_t d, bool causal, unsigned seed) {
    p.batch = b, p.heads = h, p.kv_heads = kvh, p.seq_q = sq, p.seq_kv = skv, p.head_dim = d, p.causal = causal;
    p.layout = AttnLayout::BHSD;
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.5, 1.5);
    for (auto* t : {&q, &d_o}) t->resize(static_cast<size_t>(p.q_elems()));
    for (auto* t : {&k, &v}) t->resize(static_cast<size_t>(p.kv_elems()));
    for (auto* t : {&q, &k, &v, &d_o})
      for (double& x : *t) x = u(gen);
  }
  AttentionInputs inputs() const {
    return {q_view(p, q.data(), DType::fp64), kv_view(p, k.data(), DType::fp64), kv_view(p, v.data(), DType::fp64),
            q_view(p, d_o.data(), DType::fp64)};
  }
};

// Naive forward: for each (b, h), the full score matrix, a masked softmax, O = P V.
std::vector<double> naive_forward(const AttentionParams& p, const std::vector<double>& q, const std::vector<double>& k,
                                  const std::vector<double>& v, std::vector<double>* lse) {
  const int64_t d = p.head_dim, sq = p.seq_q, skv = p.seq_kv, g = p.heads / p.kv_heads;
  std::vector<double> o(static_cast<size_t>(p.q_elems()), 0.0);
  if (lse) lse->assign(static_cast<size_t>(p.lse_elems()), 0.0);
  // The softmax scale every implementation uses: 1/sqrt(d) rounded to fp32 (AttentionParams).
  const double scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(d)));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h) {
      const double* qh = q.data() + (b * p.heads + h) * sq * d;
      const double* kh = k.data() + (b * p.kv_heads + h / g) * skv * d;
      const double* vh = v.data() + (b * p.kv_heads + h / g) * skv * d;
      for (int64_t i = 0; i < sq; ++i) {
        std::vector<double> e(static_cast<size_t>(skv), 0.0);
        double sum = 0;
        for (int64_t j = 0; j < skv; ++j) {
          if (p.causal && j > i) continue;  // top-left: query i sees keys 0..i
          double x = 0;
          for (int64_t c = 0; c < d; ++c) x += qh[i * d + c] * kh[j * d + c];
          e[j] = std::exp(scale * x);
          sum += e[j];
        }
        for (int64_t j = 0; j < skv; ++j)
          for (int64_t c = 0; c < d; ++c) o[((b * p.heads + h) * sq + i) * d + c] += e[j] / sum * vh[j * d + c];
        if (lse) (*lse)[(b * p.heads + h) * sq + i] = std::log(sum);
      }
    }
  return o;
}

double loss(const Tiny& t, const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v) {
  const auto o = naive_forward(t.p, q, k, v, nullptr);
  double l = 0;
  for (size_t i = 0; i < o.size(); ++i) l += o[i] * t.d_o[i];
  return l;
}

}  // namespace

class ReferenceShapes : public ::testing::TestWithParam<std::tuple<int, int, int, bool>> {};

TEST_P(ReferenceShapes, ForwardMatchesNaive) {
  const auto [heads, kv, sq, causal] = GetParam();
  const Tiny t(2, heads, kv, sq, 7, 8, causal, 11);
  std::vector<double> lse;
  const auto o = naive_forward(t.p, t.q, t.k, t.v, &lse);
  const FullReference ref = reference_attention(t.p, t.inputs(), false);
  for (size_t i = 0; i < o.size(); ++i) ASSERT_NEAR(ref.o[i], o[i], 1e-12) << i;
  for (size_t i = 0; i < lse.size(); ++i) ASSERT_NEAR(ref.lse[i], lse[i], 1e-12) << i;
}

TEST_P(ReferenceShapes, BackwardMatchesFiniteDifferences) {
  const auto [heads, kv, sq, causal] = GetParam();
  const Tiny t(1, heads, kv, sq, 7, 4, causal, 23);
  const FullReference ref = reference_attention(t.p, t.inputs(), true);
  const double eps = 1e-6;
  auto check = [&](const std::vector<double>& x, const std::vector<double>& grad, int which, const char* name) {
    for (size_t i = 0; i < x.size(); ++i) {
      auto plus = x, minus = x;
      plus[i] += eps, minus[i] -= eps;
      auto l = [&](const std::vector<double>& y) {
        return loss(t, which == 0 ? y : t.q, which == 1 ? y : t.k, which == 2 ? y : t.v);
      };
      const double fd = (l(plus) - l(minus)) / (2 * eps);
      ASSERT_NEAR(grad[i], fd, 1e-7) << name << "[" << i << "]";
    }
  };
  check(t.q, ref.dq, 0, "dQ");
  check(t.k, ref.dk, 1, "dK");  // GQA: sums over the query heads of the group
  check(t.v, ref.dv, 2, "dV");
}

// (heads, kv_heads, seq_q, causal) with seq_kv = 7: MHA, GQA, MQA; s_q <, = and > s_kv.
INSTANTIATE_TEST_SUITE_P(Attention, ReferenceShapes,
                         ::testing::Values(std::make_tuple(2, 2, 5, false), std::make_tuple(2, 2, 5, true),
                                           std::make_tuple(4, 2, 7, true), std::make_tuple(3, 1, 9, true),
                                           std::make_tuple(3, 1, 9, false)));

// A kernel that rounds P to fp16 before dV = Pᵀ dO loses a tiny P to fp16's subnormal range:
// the error is absolute (at most half the smallest subnormal, 2^-25), not relative. Key 1
// is seen only by query 1 (top-left causal), with P_11 ≈ 9e-8: rounded to fp16 its dV is
// ~30% off relative to its magnitude, far past the fp16 gradient tolerance, yet within the
// underflow bound times the floor (Σ_i |dO_i|), which the verification allows.
TEST(AttentionReference, Fp16UnderflowOfPIsAnAbsoluteErrorTheFloorAllows) {
  EXPECT_EQ(dtype_underflow(DType::fp16), std::ldexp(1.0, -25));
  EXPECT_EQ(dtype_underflow(DType::bf16), std::ldexp(1.0, -134));
  EXPECT_EQ(dtype_underflow(DType::int8), 0.0);
  Tiny t(1, 1, 1, 2, 2, 1, true, 1);  // head_dim 1: the softmax scale is 1
  t.q = {0.5, 1.0};
  t.k = {10.0, -6.2};  // x_10 = 10, x_11 = -6.2: P_11 = e^-16.2 / (1 + e^-16.2) ≈ 9.2e-8
  t.v = {0.3, -0.7};
  t.d_o = {0.8, -0.9};
  const AttentionInputs in = t.inputs();
  const GroupStats stats = reference_group_stats(t.p, in, 0, 0);
  const KvRowResult r = reference_kv_row(t.p, in, stats, 0, 0, 1);
  const double p11 = std::exp(-6.2 - stats.lse[1]);
  ASSERT_NEAR(r.dv[0], p11 * -0.9, 1e-20);
  const double p11_fp16 = elem::fp16_to_float(elem::float_to_fp16(static_cast<float>(p11)));
  const double got = p11_fp16 * -0.9;  // what such a kernel writes for dV_1
  const Tolerances tol = tolerances(make_problem(DType::fp16, AttnPass::bwd, FlopConvention::fa2, "BHSD", 1, 1, 1, 2,
                                                 2, 1, true));
  const double err = std::fabs(got - r.dv[0]);
  EXPECT_GT(err, tol.grad * r.dv_mag[0]) << "relative to its magnitude alone, the rounded P fails";
  EXPECT_LE(err, tol.grad * r.dv_mag[0] + tol.underflow * r.dv_floor[0]);
  EXPECT_DOUBLE_EQ(r.dv_floor[0], 0.9);
  // A dropped term is still caught: dV_0 without query 1's contribution.
  const KvRowResult r0 = reference_kv_row(t.p, in, stats, 0, 0, 0);
  const double p10 = std::exp(10.0 - stats.lse[1]);
  EXPECT_GT(std::fabs(p10 * -0.9), tol.grad * r0.dv_mag[0] + tol.underflow * r0.dv_floor[0]);
}

TEST(AttentionReference, LayoutsGiveTheSameResult) {
  Tiny t(2, 2, 1, 5, 6, 8, true, 5);
  const FullReference bhsd = reference_attention(t.p, t.inputs(), true);
  // The same logical tensors stored BSHD.
  AttentionParams p = t.p;
  p.layout = AttnLayout::BSHD;
  auto to_bshd = [&](const std::vector<double>& x, int64_t heads, int64_t seq) {
    std::vector<double> y(x.size());
    const auto s = p.strides(heads, seq);
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < seq; ++i)
          for (int64_t c = 0; c < p.head_dim; ++c)
            y[b * s.batch + h * s.head + i * s.seq + c] = x[((b * heads + h) * seq + i) * p.head_dim + c];
    return y;
  };
  const auto q = to_bshd(t.q, 2, 5), k = to_bshd(t.k, 1, 6), v = to_bshd(t.v, 1, 6), d_o = to_bshd(t.d_o, 2, 5);
  const AttentionInputs in{q_view(p, q.data(), DType::fp64), kv_view(p, k.data(), DType::fp64),
                           kv_view(p, v.data(), DType::fp64), q_view(p, d_o.data(), DType::fp64)};
  const FullReference bshd = reference_attention(p, in, true);  // outputs are packed BHSD either way
  for (size_t i = 0; i < bhsd.o.size(); ++i) ASSERT_NEAR(bshd.o[i], bhsd.o[i], 1e-14);
  for (size_t i = 0; i < bhsd.dk.size(); ++i) ASSERT_NEAR(bshd.dk[i], bhsd.dk[i], 1e-13);
}

TEST(AttentionVerifyPlan, SmallChecksEverythingLargeSamples) {
  auto small = make_problem(DType::fp32, AttnPass::bwd, FlopConvention::fa2, "BSHD", 1, 4, 1, 128, 128, 64, true);
  const VerifyPlan ps = plan_verification(small, 7);
  EXPECT_TRUE(ps.all_q_rows);
  EXPECT_TRUE(ps.all_kv_rows);
  EXPECT_EQ(ps.q_rows.size(), 4u * 128);
  EXPECT_EQ(ps.kv_rows.size(), 128u);

  auto big = make_problem(DType::bf16, AttnPass::fwdbwd, FlopConvention::fa2, "BSHD", 2, 16, 4, 65536, 65536, 128, true);
  const VerifyPlan pb = plan_verification(big, 7);
  EXPECT_FALSE(pb.all_q_rows);
  EXPECT_FALSE(pb.all_kv_rows);
  EXPECT_FALSE(pb.exact_group_stats);
  EXPECT_GE(pb.q_rows.size(), 16u);
  EXPECT_LE(pb.q_rows.size(), 1024u + 4);
  EXPECT_EQ(pb.q_rows.front(), (std::array<int64_t, 3>{0, 0, 0}));  // where fault injection writes
  for (const auto& [b, h, i] : pb.q_rows) EXPECT_TRUE(b < 2 && h < 16 && i < 65536);
  for (const auto& [b, hk, j] : pb.kv_rows) {
    EXPECT_TRUE((b == 0 && hk == 0) || (b == 1 && hk == 3));  // two groups, statistics paid once each
    EXPECT_LT(j, 65536);
  }
}

namespace {
Row run_host(const AttentionProblem& p, const std::string& fault = "") {
  auto backend = make_backend("host");
  RunConfig config;
  config.measure.max_time_s = 0.01;
  config.measure.warmup_time_s = 0;
  config.measure.min_samples = 1;
  config.inject_fault = fault;
  auto op = make_host_attention(p, "hot");
  PointContext ctx{*backend, config, "attention", nullptr};
  RunTally tally;
  return run_point(*op, ctx, nullptr, tally);
}
}  // namespace

TEST(HostAttention, VerifiesAcrossAxes) {
  for (DType t : {DType::fp32, DType::fp64})
    for (AttnPass pass : {AttnPass::fwd, AttnPass::bwd, AttnPass::fwdbwd})
      for (bool causal : {false, true}) {
        // GQA, s_q > s_kv, ragged blocks (70 rows: one full and one partial 64-row block).
        auto p = make_problem(t, pass, FlopConvention::fa2, "BHSD", 2, 4, 2, 70, 33, 16, causal);
        const Row row = run_host(p);
        EXPECT_EQ(row.get("status"), "ok") << p.point("host", "hot") << ": " << row.get("status_detail");
        EXPECT_EQ(row.get("verified"), "ok") << p.point("host", "hot");
        if (t == DType::fp64) EXPECT_LT(std::stod(row.get("max_rel_err")), 1e-6);  // LSE is stored in fp32
      }
}

TEST(HostAttention, CorruptedOutputFailsVerification) {
  for (AttnPass pass : {AttnPass::fwd, AttnPass::bwd}) {
    auto p = make_problem(DType::fp32, pass, FlopConvention::fa2, "BSHD", 1, 2, 2, 32, 32, 16, true);
    const Row row = run_host(p, "corrupt-output");
    EXPECT_EQ(row.get("verified"), "fail");
    EXPECT_EQ(row.get("status"), "error");
  }
}

TEST(HostAttention, UnsupportedDtypeIsASkip) {
  auto p = make_problem(DType::bf16, AttnPass::fwd, FlopConvention::fa2, "BSHD", 1, 2, 2, 32, 32, 16, false);
  EXPECT_EQ(run_host(p).get("status"), "skipped");
}
