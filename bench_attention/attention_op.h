// What every attention implementation shares and is not the kernel: buffers with seeded random
// inputs, NaN-poisoned outputs, verification of O/LSE (and dQ/dK/dV) against the fp64 host
// reference on all rows or a documented sample, throughput and the peak check. An
// implementation (host, cudnn, flash) fills in check_supported(), prepare(), forward(),
// backward() and its provenance cells.
#pragma once

#include <array>
#include <vector>

#include "bench_attention/attention_problem.h"
#include "core/driver/op.h"

namespace gpucal::attention {

class AttentionOp : public Op {
 public:
  AttentionOp(AttentionProblem p, std::string impl, std::string regime)
      : p_(std::move(p)), impl_(std::move(impl)), regime_(std::move(regime)) {}
  std::string point() const override { return p_.point(impl_, regime_); }
  std::string impl() const override { return impl_; }
  void describe(Row& row) const override { p_.describe(row); }
  void setup(Backend& backend, const RunConfig& config) override;
  Verification verify() override;
  // fwd: forward(); bwd: backward() from the O and LSE setup() computed; fwdbwd: both.
  void launch() override;
  bool annotate(Row& row, const Measurement& m) const override;
  void teardown() override;
  const AttentionProblem& problem() const { return p_; }

 protected:
  // Throws SkipPoint when this implementation cannot run the point on this backend. Runs
  // before anything is allocated.
  virtual void check_supported() = 0;
  // Device bytes beyond the tensors (workspace), for the memory check before allocating.
  virtual size_t workspace_estimate() const { return 0; }
  // Descriptors, plans, workspace; the tensors exist and hold their inputs.
  virtual void prepare() = 0;
  virtual void forward() = 0;   // Q K V -> O, LSE
  virtual void backward() = 0;  // Q K V O LSE dO -> dQ dK dV
  // graph_build_ms, workspace_bytes, engine.
  virtual void describe_impl(Row&) const {}
  virtual void release() {}

  AttentionProblem p_;
  std::string impl_, regime_;
  Backend* backend_ = nullptr;
  const RunConfig* config_ = nullptr;
  uint64_t seed_ = 0;
  Buffer q_, k_, v_, o_, lse_, do_, dq_, dk_, dv_;
};

// Which rows verification checks (docs/measurement.md, "Verification").
struct VerifyPlan {
  std::vector<std::array<int64_t, 3>> q_rows;   // (batch, head, query row): O, LSE, and dQ
  std::vector<std::array<int64_t, 3>> kv_rows;  // (batch, kv head, key row): dK, dV
  bool all_q_rows = false, all_kv_rows = false;
  // dK/dV need lse and Δ of every query row of the group: from the reference (exact) when
  // affordable, else from the implementation's own forward outputs, which the sampled query
  // rows verify.
  bool exact_group_stats = true;
};
// budget: fp64 reference flops allowed for each of the query-row and key-row checks.
VerifyPlan plan_verification(const AttentionProblem& p, uint64_t seed, double budget = 5e8);

}  // namespace gpucal::attention
