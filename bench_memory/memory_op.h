// MemoryOp: what every bench_memory point shares and is not the kernel: tensors with seeded
// random inputs, poisoned outputs, verification against the fp64 reference (every unit of
// small points, corners and a seeded sample of large ones), bandwidth, the fraction of the
// run's copy bandwidth, and the peak checks. The kernel itself comes from a KernelImpl.
#pragma once

#include <functional>
#include <memory>

#include "bench_memory/memory_impls.h"
#include "bench_memory/memory_point.h"
#include "core/driver/driver.h"
#include "core/driver/op.h"

namespace gpucal::memory {

using ImplFactory = std::function<std::unique_ptr<KernelImpl>()>;

class MemoryOp : public Op, public VerificationCells {
 public:
  MemoryOp(MemoryPoint p, std::string impl, std::string regime, ImplFactory make_impl, std::shared_ptr<RunContext> ctx)
      : p_(p), impl_name_(std::move(impl)), regime_(std::move(regime)), make_impl_(std::move(make_impl)),
        ctx_(std::move(ctx)) {}
  std::string point() const override { return p_.key(impl_name_, regime_); }
  std::string impl() const override { return impl_name_; }
  void describe(Row& row) const override;
  void setup(Backend& backend, const RunConfig& config) override;
  Verification verify() override;
  void launch() override;
  bool annotate(Row& row, const Measurement& m) const override;
  void teardown() override;
  void verification_cells(Row& row) const override;

 private:
  // Seeded random inputs (the same values every call); returns the seed of each tensor.
  std::vector<uint64_t> fill_inputs();
  MemoryPoint p_;
  std::string impl_name_, regime_;
  ImplFactory make_impl_;
  std::shared_ptr<RunContext> ctx_;
  std::unique_ptr<KernelImpl> impl_;
  Backend* backend_ = nullptr;
  const RunConfig* config_ = nullptr;
  uint64_t seed_ = 0;
  std::vector<Buffer> tensors_;
  Buffer workspace_;
  LaunchArgs args_;
  std::string verify_method_;
  int64_t verified_elements_ = 0;
};

}  // namespace gpucal::memory
