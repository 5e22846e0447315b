// One GEMM point, in BLAS column-major terms: D[m x n] = alpha * op(A) * op(B) + beta * C,
// op(A) is m x k, op(B) is k x n, `batch` strided matrices of each. Layout "NT" means A
// not transposed (stored m x k, lda = m) and B transposed (stored n x k, ldb = n).
// Flop and byte counts live here, once.
#pragma once

#include <cstdint>
#include <string>

#include "harness/dtype.h"
#include "harness/row.h"

namespace gpucal::gemm {

struct GemmProblem {
  DType input = DType::fp32;    // A and B element type
  DType output = DType::fp32;   // C and D element type
  DType math = DType::fp32;     // what the multiply runs in (tf32 for fp32 on tensor cores)
  std::string layout = "NN";
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double alpha = 1.0, beta = 0.0;

  bool trans_a() const { return layout[0] == 'T'; }
  bool trans_b() const { return layout[1] == 'T'; }
  int64_t lda() const { return trans_a() ? k : m; }
  int64_t ldb() const { return trans_b() ? n : k; }
  int64_t ldc() const { return m; }
  int64_t a_elems() const { return m * k; }  // per batch entry
  int64_t b_elems() const { return k * n; }
  int64_t c_elems() const { return m * n; }

  // 2*M*N*K per matrix (one multiply and one add per term); the 2*M*N epilogue that
  // cutlass_profiler adds is not counted.
  double flops() const;
  // Compulsory traffic: read A and B, write D, and read C when beta != 0.
  double bytes() const;
  double arithmetic_intensity() const { return flops() / bytes(); }
  std::string point(const std::string& impl, const std::string& regime) const;
  void describe(Row& row) const;
};

// The math type a user dtype runs in, and its input/output storage: fp32 -> fp32/fp32/fp32,
// tf32 -> fp32 storage with tf32 math, fp16/bf16 -> same storage and fp32 accumulate.
GemmProblem make_problem(DType requested, const std::string& layout, int64_t m, int64_t n, int64_t k,
                         int64_t batch, double alpha, double beta);

// Normwise-per-element tolerance for |d - ref| / (sum_k |alpha a b| + |beta c|): rounding of
// the output (2u_out), of inputs to the math type (2u_math), and accumulation (4 sqrt(K) u_acc).
double tolerance(const GemmProblem& p);

}  // namespace gpucal::gemm
