#include "bench_step/step_op.h"

#include <algorithm>

#include "core/registry/listing.h"

namespace gpucal::step {

StepOp::StepOp(std::string point, std::string impl, std::vector<std::pair<std::string, std::string>> cells,
               std::vector<StepEntry> entries,
               std::vector<std::pair<std::size_t, int64_t>> sequence, double flops, std::vector<std::string> roles_run,
               std::vector<std::string> roles_skipped)
    : point_(std::move(point)),
      impl_(std::move(impl)),
      cells_(std::move(cells)),
      entries_(std::move(entries)),
      sequence_(std::move(sequence)),
      flops_(flops),
      roles_run_(std::move(roles_run)),
      roles_skipped_(std::move(roles_skipped)) {
  for (const auto& s : sequence_) launches_ += s.second;
}

void StepOp::describe(Row& row) const {
  for (const auto& [k, v] : cells_) row.set(k, v);
  row.set("ops", static_cast<int64_t>(entries_.size()))
      .set("launches", launches_)
      .set("roles_run", registry::join(roles_run_, "+"))
      .set("roles_skipped", registry::join(roles_skipped_, "+"))
      .set("flops", flops_);
}

void StepOp::setup(Backend& backend, const RunConfig& config) {
  for (auto& e : entries_) e.op->setup(backend, config);
}

Verification StepOp::verify() {
  Verification all{.status = "ok"};
  for (auto& e : entries_) {
    const Verification v = e.op->verify();
    if (v.status == "fail") return {.status = "fail", .max_rel_err = v.max_rel_err, .detail = e.roles + ": " + v.detail};
    all.max_rel_err = std::max(all.max_rel_err, v.max_rel_err);
  }
  return all;
}

void StepOp::launch() {
  for (const auto& [index, calls] : sequence_)
    for (int64_t c = 0; c < calls; ++c) entries_[index].op->launch();
}

bool StepOp::annotate(Row& row, const Measurement& m) const {
  const double s = m.seconds.median;
  if (s > 0) row.set("tflops", flops_ / s / 1e12);
  return true;
}

void StepOp::teardown() {
  for (auto& e : entries_) e.op->teardown();
}

}  // namespace gpucal::step
