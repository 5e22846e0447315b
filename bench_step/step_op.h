// One training step's operations on one rank, run for real as one timed sequence: each
// derived operation (harness/model) launched calls_per_step times in derivation order, through
// the benches' own ops (bench_gemm, bench_attention, bench_memory, bench_collectives), so the
// sum `gpucal predict` makes from isolated measurements can be checked against the sequence
// it claims to predict. One op instance per distinct shape (set up once, outside the timer).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/driver/driver.h"
#include "core/model/workload.h"
#include "core/driver/op.h"

namespace gpucal::step {

struct StepEntry {
  std::unique_ptr<Op> op;
  std::string roles;  // '+'-joined roles this shape stands for
};

class StepOp : public Op {
 public:
  // `sequence`: (entry index, calls) in the order the step runs them.
  StepOp(std::string point, std::string impl, std::vector<std::pair<std::string, std::string>> cells,
         std::vector<StepEntry> entries,
         std::vector<std::pair<std::size_t, int64_t>> sequence, double flops, std::vector<std::string> roles_run,
         std::vector<std::string> roles_skipped);
  std::string point() const override { return point_; }
  std::string impl() const override { return impl_; }
  void describe(Row& row) const override;
  void setup(Backend& backend, const RunConfig& config) override;
  Verification verify() override;  // every op's own check; the first failure fails the step
  void launch() override;
  bool annotate(Row& row, const Measurement& m) const override;
  void teardown() override;

 private:
  std::string point_, impl_;
  std::vector<std::pair<std::string, std::string>> cells_;  // the model and layout
  std::vector<StepEntry> entries_;
  std::vector<std::pair<std::size_t, int64_t>> sequence_;
  double flops_ = 0;
  int64_t launches_ = 0;
  std::vector<std::string> roles_run_, roles_skipped_;
};

}  // namespace gpucal::step
