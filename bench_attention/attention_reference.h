// The fp64 reference of scaled-dot-product attention, row by row so that large problems can
// be verified on a sample of rows:
//   x_ij = scale · q_i·k_j (keys j ≤ i only when causal, top-left), P = softmax_j(x),
//   O_i = Σ_j P_ij v_j, lse_i = log Σ_j exp(x_ij),
//   Δ_i = dO_i·O_i, dP_ij = dO_i·v_j, dS_ij = P_ij (dP_ij − Δ_i),
//   dQ_i = scale Σ_j dS_ij k_j, dK_j = scale Σ_{h in group} Σ_i dS_ij q_i, dV_j = Σ_{h,i} P_ij dO_i.
// A query row needs one pass over the keys; a key row (dK_j, dV_j) needs lse_i and Δ_i of every
// query row of every query head sharing its kv head (GQA/MQA), supplied by the caller.
// Each result comes with its magnitude (the same sum over absolute terms), which the
// tolerances are relative to, and its floor: the sum of the absolute factors that P or dS
// multiply (Σ_j |v_jd| for O, scale Σ_j |k_jd| for dQ, scale Σ_i |q_id| for dK, Σ_i |dO_id|
// for dV). A kernel that rounds P and dS to a 16-bit type before its matmuls loses their
// small values to underflow (fp16's subnormals below 6.1e-5), an absolute error of at most
// the format's underflow bound times the floor, whatever the magnitude.
#pragma once

#include <cstdint>
#include <vector>

#include "bench_attention/attention_params.h"
#include "core/backend/dtype.h"

namespace gpucal::attention {

// Read-only view of a [batch][heads][seq][head_dim] tensor in host memory, any DType,
// with AttentionParams' strides for its layout.
struct HostTensor {
  const void* data = nullptr;
  DType type = DType::fp32;
  AttentionParams::Strides strides{};
  // Elements [0, n) of row (b, h, s) as double.
  void load_row(double* dst, int64_t n, int64_t b, int64_t h, int64_t s) const;
};

HostTensor q_view(const AttentionParams& p, const void* data, DType t);   // also O, dO, dQ
HostTensor kv_view(const AttentionParams& p, const void* data, DType t);  // also dK, dV

struct AttentionInputs {
  HostTensor q, k, v, d_o;  // d_o may be empty (data == nullptr) for forward-only checks
};

struct QueryRowResult {
  double lse = 0;
  double x_abs_max = 0;  // max_j |x_ij| bound: scale Σ_d |q_id k_jd|
  std::vector<double> o, o_mag, o_floor;  // O_i, Σ_j P_ij |v_jd|, Σ_j |v_jd|
  // Backward (when d_o is given):
  double delta = 0, delta_mag = 0;  // Δ_i and Σ_d |dO_id O_id|
  std::vector<double> dq, dq_mag, dq_floor;
};
QueryRowResult reference_query_row(const AttentionParams& p, const AttentionInputs& in, int64_t b, int64_t h,
                                   int64_t i, bool with_grad);

// Softmax statistics of every query row of the query heads of kv head hk in batch b:
// index [(h − hk·group)·seq_q + i]. delta and delta_mag from the given O (the reference's or
// an implementation's; see attention_op.cpp for when each is used).
struct GroupStats {
  std::vector<double> lse, delta, delta_mag;
};

struct KvRowResult {
  std::vector<double> dk, dv, dk_mag, dv_mag, dk_floor, dv_floor;
};
KvRowResult reference_kv_row(const AttentionParams& p, const AttentionInputs& in, const GroupStats& stats,
                             int64_t b, int64_t hk, int64_t j);

// Exact statistics of a group from the reference's own forward (cost: a forward of the group).
GroupStats reference_group_stats(const AttentionParams& p, const AttentionInputs& in, int64_t b, int64_t hk);

// Whole-tensor reference (small problems, tests): outputs in [b][h][s][d] order (packed BHSD),
// lse [b][h][s_q].
struct FullReference {
  std::vector<double> o, lse, dq, dk, dv;
};
FullReference reference_attention(const AttentionParams& p, const AttentionInputs& in, bool with_grad);

}  // namespace gpucal::attention
