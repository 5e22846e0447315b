// What a GPU runtime's answer to "how many devices?" means. A machine without a driver (or
// without a device, or with only the toolkit's stub driver library) has no GPU: GPU tests
// skip and `--backend auto` picks the host. A machine whose driver is present but whose
// runtime fails has a broken GPU stack: that is an error with the runtime's message, never
// a quiet "0 devices". The vendor code (gpu_backend.cuh) maps its error codes to
// GpuInitStatus and says whether the driver is present; the decision is made here.
#pragma once

#include <string>

namespace gpucal {

enum class GpuInitStatus {
  ok,
  no_device,      // cudaErrorNoDevice, hipErrorNoDevice
  no_driver,      // cudaErrorInsufficientDriver, hipErrorInsufficientDriver: no driver, or one too old
  stub_library,   // cudaErrorStubLibrary: the toolkit's stub libcuda (a build machine)
  other_error,    // any other failure of the runtime
};

enum class GpuInitVerdict { devices, no_gpu, failed };

struct GpuInitOutcome {
  GpuInitVerdict verdict = GpuInitVerdict::no_gpu;
  std::string reason;  // why there is no GPU, or the error to report
};

// driver_present: the driver's user-space part exists (CUDA: libcuda.so.1 loads; HIP: the
// amdgpu kernel driver's /dev/kfd exists). message: the runtime's error string.
GpuInitOutcome classify_gpu_init(GpuInitStatus status, bool driver_present, const std::string& vendor,
                                 const std::string& message);

}  // namespace gpucal
