// `gpucal`: our own kernels (memory_kernels_gpu.cuh) behind KernelImpl, on the cuda or hip
// backend, whichever this build has and the run selected. The two vendor builds export the
// same API in their own namespaces; this file picks one at run time.
#include "bench_memory/memory_gpu.h"
#include "bench_memory/memory_impls.h"
#include "core/errors.h"

namespace gpucal::memory {

namespace {

struct GpuApi {
  const char* vendor = nullptr;
  void (*check)(Kernel, DType) = nullptr;
  size_t (*workspace)(const LaunchArgs&, int) = nullptr;
  void (*launch)(const LaunchArgs&, int) = nullptr;
};

GpuApi api_for([[maybe_unused]] const std::string& backend) {
#if defined(GPUCAL_HAVE_MEMORY_CUDA)
  if (backend == "cuda") return {"cuda", cuda::gpu_check_supported, cuda::gpu_workspace_bytes, cuda::gpu_launch};
#endif
#if defined(GPUCAL_HAVE_MEMORY_HIP)
  if (backend == "hip") return {"hip", hip::gpu_check_supported, hip::gpu_workspace_bytes, hip::gpu_launch};
#endif
  return {};
}

class GpuImpl : public KernelImpl {
 public:
  explicit GpuImpl(Backend& backend) : api_(api_for(backend.name())), sms_(backend.info().compute_units) {
    backend_name_ = backend.name();
  }
  void check_supported(Kernel k, DType t) const override {
    if (!api_.vendor) throw SkipPoint("the gpucal kernels run on a GPU backend built into this binary, not on " + backend_name_);
    try {
      api_.check(k, t);
    } catch (const std::invalid_argument& e) {
      throw SkipPoint(e.what());
    }
  }
  size_t workspace_bytes(const LaunchArgs& a) const override { return api_.workspace(a, sms_); }
  void launch(const LaunchArgs& a) override { api_.launch(a, sms_); }
  void describe(Row& row) const override { row.set("engine", std::string("gpucal (") + api_.vendor + ")"); }

 private:
  GpuApi api_;
  int sms_;
  std::string backend_name_;
};

}  // namespace

bool have_gpu_kernels() {
#if defined(GPUCAL_HAVE_MEMORY_CUDA) || defined(GPUCAL_HAVE_MEMORY_HIP)
  return true;
#else
  return false;
#endif
}

std::unique_ptr<KernelImpl> make_gpu_impl(Backend& backend) { return std::make_unique<GpuImpl>(backend); }

}  // namespace gpucal::memory
