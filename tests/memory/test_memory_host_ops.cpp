// bench_memory's ops driven end to end on the host backend without Google Benchmark: every
// kernel in every host dtype on shapes that exercise the tails (odd sizes, rows that are not
// a vector width), the recorded skips, the columns a row carries, and wrong kernels caught
// by verification (an element 5% off, an element never written, a skipped
// update), not only the injected corner fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "bench_memory/memory_impls.h"
#include "bench_memory/memory_op.h"
#include "bench_memory/memory_verify.h"
#include "core/driver/driver.h"
#include "core/backend/element_convert.h"

using namespace gpucal;
using namespace gpucal::memory;

namespace {

struct HostRun {
  std::unique_ptr<Backend> backend = make_backend("host");
  RunConfig config;
  std::string bench = "memory";
  RunTally tally;
  std::shared_ptr<RunContext> ctx = std::make_shared<RunContext>();
  HostRun() {
    config.regime = "hot";
    config.measure.cold = false;
    config.measure.max_time_s = 0.01;
    config.measure.warmup_time_s = 0;
    config.measure.min_samples = 3;
    ctx->caches = cache_levels(backend->info());
    ctx->llc_bytes = last_level_bytes(ctx->caches);
  }
  Row run(const MemoryPoint& p, ImplFactory factory = [] { return make_host_impl(); }) {
    MemoryOp op(p, "host", config.regime, std::move(factory), ctx);
    PointContext pc{*backend, config, bench, {}};
    return run_point(op, pc, nullptr, tally);
  }
};

Dims shape_for(const KernelDesc& k) {
  if (k.shape == Shape::rows_cols) return Dims{0, 7, 301};  // 301: no vector width divides it
  return Dims{k.family == Family::vector ? 1000 : 12345, 0, 0};
}

// Runs the host kernel, then damages its output the way a wrong kernel would.
class WrongImpl : public KernelImpl {
 public:
  enum Fault { off_by_5_percent, unwritten_last, no_update };
  explicit WrongImpl(Fault f) : inner_(make_host_impl()), fault_(f) {}
  void check_supported(Kernel k, DType t) const override { inner_->check_supported(k, t); }
  size_t workspace_bytes(const LaunchArgs& a) const override { return inner_->workspace_bytes(a); }
  void launch(const LaunchArgs& a) override {
    if (fault_ == no_update) return;  // in-place outputs keep their inputs
    inner_->launch(a);
    const KernelDesc& k = kernel_desc(a.kernel);
    const int out = output_tensors(k).back();
    const TensorSpec& t = k.tensors[static_cast<size_t>(out)];
    const DType type = elem_dtype(t.elem, a.dtype);
    const int64_t n = extent_elements(t.extent, a.dims);
    const int64_t i = fault_ == unwritten_last ? n - 1 : n / 2;  // not a corner
    const double v = elem::load_as_double(a.tensors[static_cast<size_t>(out)], static_cast<uint64_t>(i), static_cast<int>(type));
    const double wrong = fault_ == unwritten_last ? std::nan("") : 1.05 * v + 0.05;
    elem::store_from_double(a.tensors[static_cast<size_t>(out)], static_cast<uint64_t>(i), static_cast<int>(type),
                            type == DType::uint8 ? 1 - v : wrong);
  }

 private:
  std::unique_ptr<KernelImpl> inner_;
  Fault fault_;
};

}  // namespace

TEST(MemoryHostOps, EveryKernelEveryDtypeVerifies) {
  HostRun h;
  for (const KernelDesc& k : kernel_table())
    for (DType t : {DType::fp32, DType::bf16, DType::fp16}) {
      const Row row = h.run(MemoryPoint{k.id, t, shape_for(k)});
      if (k.id == Kernel::fma_chain && t != DType::fp32) {
        EXPECT_EQ(row.get("status"), "skipped") << row.get("point");
        EXPECT_NE(row.get("status_detail").find("vector FMA"), std::string::npos);
        continue;
      }
      EXPECT_EQ(row.get("status"), "ok") << row.get("point") << ": " << row.get("status_detail");
      EXPECT_EQ(row.get("verified"), "ok") << row.get("point");
      EXPECT_EQ(row.get("verify_method"), "host-fp64-all") << row.get("point");
      EXPECT_GT(std::stod(row.get("verified_elements")), 0);
      EXPECT_GT(std::stod(row.get("bandwidth_gbps")), 0);
      EXPECT_EQ(row.get("kernel"), k.name);
      if (k.family == Family::vector) EXPECT_NE(row.get("tflops"), "");
    }
  EXPECT_EQ(h.tally.failures, 0);
}

TEST(MemoryHostOps, LargePointsAreSampled) {
  // The plan: every unit while the reference is cheap, else the corners (unit 0 holds the
  // element fault injection writes; the last unit the tail; the first dgamma column) and a
  // seeded sample.
  const Dims small{0, 64, 1000}, big{0, 16384, 8192};
  EXPECT_TRUE(plan_verification(kernel_desc(Kernel::softmax_fwd), small, 1).all);
  const VerifyPlan rows = plan_verification(kernel_desc(Kernel::softmax_fwd), big, 1);
  EXPECT_FALSE(rows.all);
  EXPECT_EQ(rows.units.front(), 0);
  EXPECT_EQ(rows.units.back(), big.rows - 1);
  EXPECT_GT(rows.units.size(), 100u);
  EXPECT_EQ(plan_verification(kernel_desc(Kernel::softmax_fwd), big, 1).units, rows.units);  // seeded
  EXPECT_NE(plan_verification(kernel_desc(Kernel::softmax_fwd), big, 2).units, rows.units);
  const VerifyPlan cols = plan_verification(kernel_desc(Kernel::layernorm_bwd), big, 1);
  EXPECT_FALSE(cols.all);
  EXPECT_TRUE(std::count(cols.units.begin(), cols.units.end(), big.rows));  // dgamma[0]
  const VerifyPlan elems = plan_verification(kernel_desc(Kernel::gelu_fwd), big, 1);
  EXPECT_EQ(elems.units.back(), big.rows * big.cols - 1);
  // One sampled point end to end.
  HostRun h;
  const Row row = h.run(MemoryPoint{Kernel::softmax_fwd, DType::bf16, Dims{0, 1300, 8192}});
  EXPECT_EQ(row.get("status"), "ok") << row.get("status_detail");
  EXPECT_EQ(row.get("verify_method"), "host-fp64-sampled");
}

TEST(MemoryHostOps, WrongKernelsAreCaught) {
  HostRun h;
  for (const KernelDesc& k : kernel_table()) {
    if (k.id == Kernel::adamw_step) continue;  // in place: see below
    for (auto fault : {WrongImpl::off_by_5_percent, WrongImpl::unwritten_last}) {
      const Row row = h.run(MemoryPoint{k.id, DType::fp32, shape_for(k)}, [fault] { return std::make_unique<WrongImpl>(fault); });
      EXPECT_EQ(row.get("status"), "error") << row.get("point") << " fault " << fault;
      EXPECT_EQ(row.get("verified"), "fail") << row.get("point");
    }
  }
  // An in-place AdamW that leaves p, m, v untouched still reads as wrong: the update is
  // visible even in bf16.
  for (DType t : {DType::fp32, DType::bf16}) {
    const Row row = h.run(MemoryPoint{Kernel::adamw_step, t, Dims{5000, 0, 0}},
                          [] { return std::make_unique<WrongImpl>(WrongImpl::no_update); });
    EXPECT_EQ(row.get("verified"), "fail") << to_string(t);
    EXPECT_NE(row.get("status_detail").find("p: "), std::string::npos) << row.get("status_detail");
  }
}

TEST(MemoryHostOps, InjectedFaultFailsEveryKernel) {
  HostRun h;
  h.config.inject_fault = "corrupt-output";
  for (const KernelDesc& k : kernel_table()) {
    const Row row = h.run(MemoryPoint{k.id, DType::fp32, shape_for(k)});
    EXPECT_EQ(row.get("verified"), "fail") << row.get("point");
  }
}

TEST(MemoryHostOps, FractionOfCopyFollowsTheCopyPlateau) {
  HostRun h;
  h.ctx->llc_bytes = 16 << 10;  // pretend: a 16 KiB last-level cache, so 64 KiB arrays are beyond it
  const Row before = h.run(MemoryPoint{Kernel::residual_add, DType::fp32, Dims{0, 16, 1024}});
  EXPECT_EQ(before.get("fraction_of_copy"), "");
  EXPECT_NE(before.get("copy_reference").find("none:"), std::string::npos);
  const Row copy = h.run(MemoryPoint{Kernel::copy, DType::fp32, Dims{1 << 15, 0, 0}});  // 2 x 128 KiB working set
  ASSERT_EQ(copy.get("status"), "ok");
  const Row after = h.run(MemoryPoint{Kernel::residual_add, DType::bf16, Dims{0, 16, 1024}});
  EXPECT_NE(after.get("fraction_of_copy"), "");
  EXPECT_DOUBLE_EQ(std::stod(after.get("copy_gbps")), std::stod(copy.get("bandwidth_gbps")));
  const double ratio = std::stod(after.get("bandwidth_gbps")) / std::stod(copy.get("bandwidth_gbps"));
  EXPECT_NEAR(std::stod(after.get("fraction_of_copy")), ratio, 1e-5 * ratio);  // 7 significant digits
}
