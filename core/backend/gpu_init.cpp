#include "core/backend/gpu_init.h"

namespace gpucal {

GpuInitOutcome classify_gpu_init(GpuInitStatus status, bool driver_present, const std::string& vendor,
                                 const std::string& message) {
  switch (status) {
    case GpuInitStatus::ok: return {GpuInitVerdict::devices, ""};
    case GpuInitStatus::no_device: return {GpuInitVerdict::no_gpu, vendor + ": no device (" + message + ")"};
    case GpuInitStatus::stub_library:
      return {GpuInitVerdict::no_gpu, vendor + ": only the toolkit's stub driver library is present (" + message + ")"};
    case GpuInitStatus::no_driver:
    case GpuInitStatus::other_error: break;
  }
  if (!driver_present) return {GpuInitVerdict::no_gpu, vendor + ": no driver (" + message + ")"};
  const std::string hint =
      status == GpuInitStatus::no_driver ? " (the driver is older than the runtime this build uses?)" : "";
  return {GpuInitVerdict::failed,
          vendor + " runtime failed to initialise with its driver present: " + message + hint};
}

}  // namespace gpucal
