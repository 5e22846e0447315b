#include "bench_memory/memory_op.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "bench_memory/memory_verify.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"
#include "core/formulas/peaks.h"
#include "core/driver/sweep.h"

namespace gpucal::memory {

namespace {

// Device memory read back in pages on first use (one copy and a synchronize per page), so a
// sampled check of a large tensor moves only the pages it touches.
class DevicePages : public ElementSource {
 public:
  DevicePages(Backend& b, const void* device, DType type, int64_t elements, int64_t page_elements)
      : b_(b), device_(static_cast<const unsigned char*>(device)), type_(type), elements_(elements),
        page_(std::max<int64_t>(1, page_elements)), esize_(static_cast<int64_t>(dtype_bytes(type))) {}
  double at(int64_t i) const override {
    const int64_t page = i / page_;
    auto it = pages_.find(page);
    if (it == pages_.end()) {
      const int64_t first = page * page_, count = std::min(page_, elements_ - first);
      std::vector<unsigned char> host(static_cast<size_t>(count * esize_));
      b_.copy(host.data(), device_ + first * esize_, host.size());
      b_.synchronize();
      it = pages_.emplace(page, std::move(host)).first;
    }
    return elem::load_as_double(it->second.data(), static_cast<uint64_t>(i - page * page_), static_cast<int>(type_));
  }

 private:
  Backend& b_;
  const unsigned char* device_;
  DType type_;
  int64_t elements_, page_, esize_;
  mutable std::unordered_map<int64_t, std::vector<unsigned char>> pages_;
};

double poison_for(DType t) {
  if (t == DType::uint8) return 0xA5;  // neither 0 nor 1: an unwritten mask byte is wrong
  if (t == DType::int32) return -12345;
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

void MemoryOp::describe(Row& row) const { p_.describe(row); }

void MemoryOp::setup(Backend& backend, const RunConfig& config) {
  backend_ = &backend;
  config_ = &config;
  seed_ = config.seed ^ std::hash<std::string>{}(point());
  impl_ = make_impl_();
  impl_->check_supported(p_.kernel, p_.dtype);
  const KernelDesc& k = p_.desc();
  args_ = LaunchArgs{};
  args_.kernel = p_.kernel;
  args_.dtype = p_.dtype;
  args_.dims = p_.dims;
  args_.s.dropout_seed = static_cast<uint32_t>(seed_ ^ (seed_ >> 32));
  args_.stream = backend.stream();
  args_.tensors.assign(k.tensors.size(), nullptr);
  const size_t workspace = impl_->workspace_bytes(args_);
  // A point that cannot fit is a recorded skip, checked before allocating (allocate() also
  // turns an out-of-memory into a skip for what this misses).
  const double need = static_cast<double>(working_set_bytes(k, p_.dims, p_.dtype)) + static_cast<double>(workspace);
  const double have = static_cast<double>(backend.info().memory_bytes);
  if (have > 0 && need > 0.9 * have)
    throw SkipPoint("needs " + format_gib(need) + " of " + (backend.is_host() ? "host" : "device") + " memory, " +
                    backend.info().name + " has " + format_gib(have));
  tensors_.clear();
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    const TensorSpec& t = k.tensors[i];
    const size_t count = static_cast<size_t>(extent_elements(t.extent, p_.dims));
    tensors_.push_back(backend.allocate(std::max<size_t>(1, count * elem_bytes(t.elem, p_.dtype))));
    args_.tensors[i] = tensors_.back().get();
  }
  if (workspace > 0) workspace_ = backend.allocate(workspace);
  args_.workspace = workspace_.get();
  args_.workspace_bytes = workspace;
  fill_inputs();
  impl_->prepare(args_, backend);
  backend.synchronize();
}

std::vector<uint64_t> MemoryOp::fill_inputs() {
  const KernelDesc& k = p_.desc();
  std::vector<uint64_t> seeds(k.tensors.size(), 0);
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    const TensorSpec& t = k.tensors[i];
    if (t.access == Access::write) continue;
    const double hi = t.elem == Elem::i32 ? static_cast<double>(p_.dims.cols) : t.hi;
    seeds[i] = seed_ + 1 + i;
    backend_->fill_random(tensors_[i].get(), static_cast<size_t>(extent_elements(t.extent, p_.dims)),
                          elem_dtype(t.elem, p_.dtype), seeds[i], t.lo, hi);
  }
  return seeds;
}

Verification MemoryOp::verify() {
  const KernelDesc& k = p_.desc();
  Backend& b = *backend_;
  // Fresh inputs (in-place AdamW state included), poisoned outputs, one launch.
  std::vector<HostView> before(k.tensors.size()), after(k.tensors.size());
  const std::vector<uint64_t> seeds = fill_inputs();
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    const TensorSpec& t = k.tensors[i];
    const DType type = elem_dtype(t.elem, p_.dtype);
    if (t.access == Access::write)
      b.fill_constant(tensors_[i].get(), static_cast<size_t>(extent_elements(t.extent, p_.dims)), type, poison_for(type));
    // An in-place tensor's inputs are gone after the launch: the reference regenerates them
    // from the seed, exactly as fill_random stored them.
    if (t.access == Access::read_write) before[i] = HostView(generated_source(seeds[i], t.lo, t.hi, type));
  }
  b.synchronize();
  impl_->launch_for_check(args_, b);
  const auto outs = output_tensors(k);
  if (config_->inject_fault == "corrupt-output") {
    const TensorSpec& t = k.tensors[static_cast<size_t>(outs.front())];
    b.fill_constant(tensors_[static_cast<size_t>(outs.front())].get(), 1, elem_dtype(t.elem, p_.dtype), 12345.0);
  }
  b.synchronize();
  const VerifyPlan plan = plan_verification(k, p_.dims, seed_);
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    const TensorSpec& t = k.tensors[i];
    const DType type = elem_dtype(t.elem, p_.dtype);
    const int64_t count = extent_elements(t.extent, p_.dims);
    HostView view;
    if (b.is_host()) {
      view = HostView(tensors_[i].get(), type);
    } else {
      // Whole tensors when every unit is checked; 16 KiB pages when sampling.
      const int64_t page = plan.all ? count : std::max<int64_t>(1, 16384 / static_cast<int64_t>(dtype_bytes(type)));
      view = HostView(std::make_shared<DevicePages>(b, tensors_[i].get(), type, count, page));
    }
    if (t.access != Access::read_write) before[i] = view;
    after[i] = view;
  }
  verify_method_ = plan.all ? "host-fp64-all" : "host-fp64-sampled";
  return check_outputs(k, p_.dims, p_.dtype, args_.s, before, after, plan, &verified_elements_);
}

void MemoryOp::verification_cells(Row& row) const {
  if (!verify_method_.empty()) row.set("verify_method", verify_method_).set("verified_elements", verified_elements_);
}

void MemoryOp::launch() { impl_->launch(args_); }

bool MemoryOp::annotate(Row& row, const Measurement& m) const {
  const KernelDesc& k = p_.desc();
  const DeviceInfo& device = backend_->info();
  const double seconds = m.seconds.median;
  const int64_t bytes = bytes_moved(k, p_.dims, p_.dtype);
  const int64_t working_set = working_set_bytes(k, p_.dims, p_.dtype);
  const double gbps = static_cast<double>(bytes) / seconds / 1e9;
  row.set("bandwidth_gbps", gbps).set("cache_level", placement(ctx_->caches, working_set));
  impl_->describe(row);
  bool plausible = true;
  if (k.family == Family::vector) {
    const double tflops = fma_chain_flops(p_.dims.n) / seconds / 1e12;
    const Peak peak = vector_peak_tflops(device, p_.dtype);
    const PeakCheck check = check_against_peak(tflops, peak);
    row.set("tflops", tflops).set("peak_tflops", peak.tflops).set("peak_source", peak.source);
    if (peak.tflops > 0) row.set("efficiency", check.efficiency);
    return !check.above_peak;
  }
  // Beyond the caches a bandwidth above the memory's theoretical peak is a timing or
  // counting error, not a result.
  const double peak_gbps = peak_memory_gbps(device);
  if (peak_gbps > 0) {
    row.set("peak_gbps", peak_gbps);
    if (ctx_->beyond_llc(working_set)) {
      row.set("efficiency", gbps / peak_gbps);
      plausible = gbps <= peak_gbps;
    }
  }
  if (p_.kernel == Kernel::copy && plausible) ctx_->record_copy(p_.dtype, working_set, gbps);
  std::string why;
  if (const auto ref = ctx_->copy_reference(p_.dtype, why)) {
    row.set("copy_gbps", ref->gbps).set("fraction_of_copy", gbps / ref->gbps).set("copy_reference", ref->describe);
  } else {
    row.set("copy_reference", why);
  }
  return plausible;
}

void MemoryOp::teardown() {
  impl_.reset();
  workspace_.reset();
  tensors_.clear();
}

}  // namespace gpucal::memory
