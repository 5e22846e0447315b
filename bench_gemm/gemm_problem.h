// One GEMM point, in BLAS column-major terms: D[m x n] = alpha * op(A) * op(B) + beta * C,
// op(A) is m x k, op(B) is k x n, `batch` strided matrices of each. Layout "NT" means A
// not transposed (stored m x k, lda = m) and B transposed (stored n x k, ldb = n).
// fp8 points multiply dequantized inputs: D = alpha * (scale_a A)(scale_b B) + beta C.
// Flop and byte counts live here, once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/backend/dtype.h"
#include "core/output/row.h"

namespace gpucal::gemm {

struct GemmProblem {
  DType input = DType::fp32;    // A element type (the user's dtype; fp32 storage for tf32)
  DType input_b = DType::fp32;  // B element type (differs only for fp8_e5m2: e5m2 x e4m3)
  DType output = DType::fp32;   // C and D element type
  DType math = DType::fp32;     // what the multiply runs in (tf32 for fp32 on tensor cores)
  std::string layout = "NN";
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double alpha = 1.0, beta = 0.0;
  double scale_a = 1.0, scale_b = 1.0;  // per-tensor dequantization scales (fp8 only)

  bool trans_a() const { return layout[0] == 'T'; }
  bool trans_b() const { return layout[1] == 'T'; }
  bool is_fp8() const { return input == DType::fp8_e4m3 || input == DType::fp8_e5m2; }
  int64_t lda() const { return trans_a() ? k : m; }
  int64_t ldb() const { return trans_b() ? n : k; }
  int64_t ldc() const { return m; }
  // Per batch entry. Integer products: valid once the point passed require_memory (its
  // bytes() fit the device), which setup checks before anything else.
  int64_t a_elems() const { return m * k; }
  int64_t b_elems() const { return k * n; }
  int64_t c_elems() const { return m * n; }
  // The dtype a row is filed under: tf32 for fp32 storage with tf32 math, else the input.
  DType user_dtype() const { return math == DType::tf32 ? DType::tf32 : input; }
  // The type products are summed in: fp64, int32 for int8, else fp32.
  DType compute_type() const;

  // 2*M*N*K per matrix (one multiply and one add per term); the 2*M*N epilogue that
  // cutlass_profiler adds is not counted.
  double flops() const;
  // Compulsory traffic: read A and B, write D, and read C when beta != 0 (also what one copy
  // of the buffers takes); computed in doubles, so any shape gives a finite number.
  double bytes() const;
  double arithmetic_intensity() const { return flops() / bytes(); }
  // "gemm/IMPL/DTYPE/LAYOUT/mM/nN/kK/bB[/outT][/betaX][/alphaX][/VARIANT]/REGIME"; the out
  // part only when the output type is not the dtype's default, VARIANT e.g. "autotune8".
  std::string point(const std::string& impl, const std::string& regime, const std::string& variant = "") const;
  void describe(Row& row) const;
};

// The output type a dtype gets when --out-dtype is not given: the input type, bf16 for fp8,
// int32 for int8, fp32 for tf32.
DType default_output(DType requested);

// The math type a user dtype runs in, and its input/output storage: fp32 -> fp32/fp32/fp32,
// tf32 -> fp32 storage with tf32 math, fp16/bf16 -> same storage and fp32 accumulate,
// fp8_e4m3 -> e4m3 x e4m3 with bf16 (or fp16, fp32) output and scales, fp8_e5m2 -> e5m2 A x
// e4m3 B (what FP8 training pairs for gradients; no library offers e5m2 x e5m2), int8 ->
// int32 output and accumulate (alpha and beta must be integers). Throws UsageError.
GemmProblem make_problem(DType requested, const std::string& layout, int64_t m, int64_t n, int64_t k,
                         int64_t batch, double alpha, double beta, std::optional<DType> output = std::nullopt);

// Normwise-per-element tolerance for |d - ref| / (sum_k |alpha a b| + |beta c|): rounding of
// the output (2u_out), of inputs to the math type (2u_math), and accumulation (4 sqrt(K)
// u_acc; u_acc = 2^-14 for fp8, whose tensor-core accumulators keep about 14 bits on
// Hopper). int8 is exact: 0. `fp32_reference` adds the reference's own accumulation error
// (4 sqrt(K) u of its accumulator) when the reference is the GPU kernel.
double tolerance(const GemmProblem& p, bool gpu_reference = false);

}  // namespace gpucal::gemm
