// The part of every GEMM implementation that is not the library call: buffers with seeded
// random inputs, verification against an fp64 host reference, throughput and peak checks.
// An implementation (host, cublaslt, hipblaslt) fills in prepare() and launch().
#pragma once

#include <memory>

#include "bench_gemm/gemm_problem.h"
#include "harness/op.h"
#include "harness/peaks.h"

namespace gpucal::gemm {

class GemmOp : public Op {
 public:
  GemmOp(GemmProblem p, std::string impl, std::string regime) : p_(std::move(p)), impl_(std::move(impl)), regime_(std::move(regime)) {}
  std::string point() const override { return p_.point(impl_, regime_); }
  std::string impl() const override { return impl_; }
  void describe(Row& row) const override { p_.describe(row); }
  void setup(Backend& backend, const RunConfig& config) override;
  Verification verify() override;
  bool annotate(Row& row, const Measurement& m) const override;
  void teardown() override;
  const GemmProblem& problem() const { return p_; }

 protected:
  // Library descriptors and algorithm choice; buffers exist when this runs.
  virtual void prepare() = 0;
  // Extra provenance cells (algorithm, workspace, ...).
  virtual void describe_algorithm(Row&) const {}
  virtual void release() {}
  // True when the library updates its output in place (BLAS: C := alpha AB + beta C), so D
  // must start as a copy of C rather than as poison when beta != 0.
  virtual bool output_in_place() const { return false; }

  GemmProblem p_;
  std::string impl_, regime_;
  Backend* backend_ = nullptr;
  const RunConfig* config_ = nullptr;
  Buffer a_, b_, c_, d_;  // D is the output; C is read only when beta != 0
  uint64_t seed_ = 0;

 private:
  void fill_inputs();
};

// Elements the reference checks: all of them for small outputs, else a fixed pseudo-random
// sample plus the four corners of every checked batch entry.
struct CheckedElement {
  int64_t batch, row, col;
};
std::vector<CheckedElement> elements_to_check(const GemmProblem& p, uint64_t seed, size_t max_sampled = 2048);

}  // namespace gpucal::gemm
