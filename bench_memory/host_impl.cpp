// `host`: the OpenMP implementations, one file per kernel family (*_host.cpp).
#include "bench_memory/host_parallel.h"
#include "bench_memory/memory_impls.h"
#include "core/errors.h"

namespace gpucal::memory {

namespace {

class HostImpl : public KernelImpl {
 public:
  void check_supported(Kernel k, DType t) const override {
    if (k == Kernel::fma_chain && t != DType::fp32)
      throw SkipPoint("host fma_chain: the CPU has no " + to_string(t) +
                      " vector FMA (its fp32 row is the host's vector rate)");
    if (t != DType::fp32 && t != DType::bf16 && t != DType::fp16)
      throw SkipPoint("host kernels store fp32, bf16 or fp16, not " + to_string(t));
  }
  size_t workspace_bytes(const LaunchArgs& a) const override { return host::norm_workspace_bytes(a.kernel, a.dims); }
  void launch(const LaunchArgs& a) override {
    switch (kernel_desc(a.kernel).family) {
      case Family::stream: return host::stream(a);
      case Family::vector: return host::fma_chain(a);
      case Family::op: break;
    }
    switch (a.kernel) {
      case Kernel::layernorm_fwd: case Kernel::layernorm_bwd: case Kernel::rmsnorm_fwd: case Kernel::rmsnorm_bwd:
        return host::norm(a);
      case Kernel::softmax_fwd: case Kernel::softmax_bwd: return host::softmax(a);
      case Kernel::gelu_fwd: case Kernel::gelu_bwd: case Kernel::swiglu_fwd: case Kernel::swiglu_bwd:
        return host::activation(a);
      case Kernel::residual_add: case Kernel::dropout_residual_add: return host::residual(a);
      case Kernel::cross_entropy_fwd: case Kernel::cross_entropy_bwd: return host::cross_entropy(a);
      case Kernel::adamw_step: return host::adamw(a);
      default: throw std::logic_error("host: kernel without an implementation");
    }
  }
  void describe(Row& row) const override {
    row.set("threads", host::threads()).set("thread_cpus", host::thread_plan().binding);
  }
};

}  // namespace

std::unique_ptr<KernelImpl> make_host_impl() { return std::make_unique<HostImpl>(); }

}  // namespace gpucal::memory
