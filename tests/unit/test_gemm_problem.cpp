#include <gtest/gtest.h>

#include <cmath>

#include "bench_gemm/gemm_op.h"
#include "core/errors.h"

using namespace gpucal;
using namespace gpucal::gemm;

TEST(GemmProblem, FlopAndByteCounts) {
  auto p = make_problem(DType::bf16, "NN", 4096, 2048, 1024, 1, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 4096 * 2048 * 1024);
  // A (m*k) + B (k*n) in bf16, D (m*n) in bf16.
  EXPECT_DOUBLE_EQ(p.bytes(), 2.0 * (4096.0 * 1024 + 1024.0 * 2048) + 2.0 * 4096 * 2048);
  auto q = make_problem(DType::fp32, "TN", 64, 32, 16, 3, 1.0, 0.5);
  EXPECT_DOUBLE_EQ(q.flops(), 2.0 * 64 * 32 * 16 * 3);
  // beta != 0 reads C as well: 4*(64*16 + 16*32) + 4*64*32*2, times batch 3.
  EXPECT_DOUBLE_EQ(q.bytes(), 3 * (4.0 * (64 * 16 + 16 * 32) + 4.0 * 64 * 32 * 2));
  EXPECT_NEAR(p.arithmetic_intensity(), p.flops() / p.bytes(), 1e-12);
}

TEST(GemmProblem, LeadingDimensionsFollowLayout) {
  auto nn = make_problem(DType::fp32, "NN", 10, 20, 30, 1, 1, 0);
  EXPECT_EQ(nn.lda(), 10);
  EXPECT_EQ(nn.ldb(), 30);
  auto tt = make_problem(DType::fp32, "TT", 10, 20, 30, 1, 1, 0);
  EXPECT_EQ(tt.lda(), 30);
  EXPECT_EQ(tt.ldb(), 20);
  EXPECT_EQ(tt.ldc(), 10);
}

TEST(GemmProblem, DtypeMapping) {
  auto t = make_problem(DType::tf32, "NN", 8, 8, 8, 1, 1, 0);
  EXPECT_EQ(t.input, DType::fp32);
  EXPECT_EQ(t.math, DType::tf32);
  EXPECT_THROW(make_problem(DType::int32, "NN", 8, 8, 8, 1, 1, 0), UsageError);
  EXPECT_THROW(make_problem(DType::fp32, "NX", 8, 8, 8, 1, 1, 0), UsageError);
  EXPECT_THROW(make_problem(DType::fp32, "NN", 0, 8, 8, 1, 1, 0), UsageError);
}

TEST(GemmProblem, PointNamesAreUniqueAndStable) {
  auto p = make_problem(DType::bf16, "NT", 4096, 4096, 4096, 1, 1, 0);
  EXPECT_EQ(p.point("cublaslt", "cold"), "gemm/cublaslt/bf16/NT/m4096/n4096/k4096/b1/cold");
  auto q = make_problem(DType::bf16, "NT", 4096, 4096, 4096, 1, 1, 1);
  EXPECT_NE(p.point("x", "cold"), q.point("x", "cold"));
  EXPECT_EQ(make_problem(DType::tf32, "NN", 8, 8, 8, 1, 1, 0).point("x", "hot"), "gemm/x/tf32/NN/m8/n8/k8/b1/hot");
}

TEST(GemmProblem, ToleranceGrowsWithKAndCoarserTypes) {
  auto f32 = make_problem(DType::fp32, "NN", 8, 8, 1024, 1, 1, 0);
  auto bf = make_problem(DType::bf16, "NN", 8, 8, 1024, 1, 1, 0);
  auto tf = make_problem(DType::tf32, "NN", 8, 8, 1024, 1, 1, 0);
  EXPECT_NEAR(tolerance(f32), 2 * std::ldexp(1.0, -24) + 4 * 32 * std::ldexp(1.0, -24), 1e-15);
  EXPECT_GT(tolerance(bf), tolerance(f32));
  EXPECT_GT(tolerance(tf), tolerance(f32));  // inputs rounded to tf32 inside the library
  EXPECT_LT(tolerance(bf), 0.01);
}

TEST(GemmProblem, CheckedElementsCoverCornersOrEverything) {
  auto small = make_problem(DType::fp32, "NN", 4, 5, 3, 2, 1, 0);
  EXPECT_EQ(elements_to_check(small, 1).size(), 40u);
  auto big = make_problem(DType::fp32, "NN", 1000, 1000, 8, 4, 1, 0);
  auto sample = elements_to_check(big, 1, 100);
  EXPECT_EQ(sample.size(), 108u);
  bool has_last = false;
  for (const auto& e : sample) {
    ASSERT_LT(e.row, 1000);
    ASSERT_LT(e.col, 1000);
    ASSERT_LT(e.batch, 4);
    has_last = has_last || (e.batch == 3 && e.row == 999 && e.col == 999);
  }
  EXPECT_TRUE(has_last);
}
