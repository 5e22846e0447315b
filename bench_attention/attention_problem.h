// One attention point as the bench sees it: the shape (AttentionParams, shared with the
// vendor wrappers), the storage dtype, the pass and the FLOP convention; its point key, its
// parameter cells, the device bytes it needs, and the verification tolerances.
#pragma once

#include <optional>
#include <string>

#include "core/formulas/attention_flops.h"
#include "bench_attention/attention_params.h"
#include "core/backend/dtype.h"
#include "core/output/row.h"

namespace gpucal::attention {

struct AttentionProblem {
  AttentionParams shape;  // shape.dtype is derived from `dtype` where it has a 16/8-bit meaning
  DType dtype = DType::fp32;  // storage of Q, K, V, O, dO, dQ, dK, dV (LSE is always fp32)
  AttnPass pass = AttnPass::fwd;
  FlopConvention convention = FlopConvention::fa2;

  bool needs_backward() const { return pass != AttnPass::fwd; }
  double flops() const;
  // "attention/flash/bf16/fwd/BSHD/b4/h16/kv16/sq4096/skv4096/d128/causal0/cold"
  std::string point(const std::string& impl, const std::string& regime) const;
  void describe(Row& row) const;
  // Device bytes of the tensors the pass touches (Q K V O LSE, plus dO dQ dK dV for backward),
  // not counting an implementation's workspace.
  double tensor_bytes() const;  // every tensor the point allocates, in bytes (a double: cannot wrap)
};

// Validates the shape and fills shape.dtype; throws UsageError (heads % kv_heads != 0, zero
// sizes, unknown layout).
AttentionProblem make_problem(DType dtype, AttnPass pass, FlopConvention convention, const std::string& layout,
                              int64_t batch, int64_t heads, int64_t kv_heads, int64_t seq_q, int64_t seq_kv,
                              int64_t head_dim, bool causal);
std::string to_string(AttnLayout layout);
// fp16/bf16/fp8_e4m3 -> the vendor-neutral dtype of the GPU wrappers; nullopt otherwise.
std::optional<AttnDtype> attn_dtype(DType t);

// Verification tolerances (docs/measurement.md, "Verification"): each is a bound on
// |got - ref| / magnitude, where the magnitude is the sum of absolute terms of the exact
// computation (Σ_j P_ij |V_jd| for O; P·(|dP| + |Δ|) weighted by |K|, |Q|, |dO| for the
// gradients), and for LSE on |got - ref| / (1 + |ref| + max_j |x_ij|). `underflow` is the
// absolute error of rounding one P or dS term to the input type below its normal range
// (dtype_underflow): an element passes when |got - ref| <= tol · magnitude + underflow · floor
// (attention_reference.h).
struct Tolerances {
  double out, lse, grad;
  double underflow = 0;
};
Tolerances tolerances(const AttentionProblem& p);

}  // namespace gpucal::attention
