// Device state around a measurement: SM and memory clocks, power, temperature and
// throttle reasons, read through NVML (loaded at run time with dlopen, so builds and hosts
// without the driver library simply report nothing). Read after a point's samples, while
// the device is still at its loaded state; throttling is flagged in the row.
#pragma once

#include <memory>
#include <string>

#include "core/backend/backend.h"
#include "core/output/row.h"

namespace gpucal {

// A value < 0 (or throttle_known false) was not read: its cell stays empty.
struct TelemetryReading {
  double sm_clock_mhz = -1, mem_clock_mhz = -1, power_w = -1, temp_c = -1;
  unsigned long long throttle_mask = 0;
  bool throttle_known = false;
  std::string throttle_reasons;  // "|"-joined names of the active reasons that cost speed; "" when none
  bool valid = false;            // at least one value was read
};

class Telemetry {
 public:
  virtual ~Telemetry() = default;
  virtual TelemetryReading read() = 0;
  virtual std::string source() const = 0;  // "nvml 12.x" or "none"
};

// NVML for CUDA devices (matched by PCI bus id); a null reader elsewhere.
std::unique_ptr<Telemetry> open_telemetry(const DeviceInfo& device);

// The NVML entry points a reading uses, looked up by name in the driver's libnvidia-ml.so.1.
// Any of them may be missing (null) in a given driver: nvmlDeviceGetTemperature is
// deprecated in NVML 13 in favour of nvmlDeviceGetTemperatureV, the clocks-event reasons
// were renamed. A missing entry point blanks its own column only.
struct NvmlReadFunctions {
  using Device = void*;
  int (*clock)(Device, int type, unsigned* mhz) = nullptr;                        // nvmlDeviceGetClockInfo
  int (*power)(Device, unsigned* milliwatts) = nullptr;                           // nvmlDeviceGetPowerUsage
  int (*temperature_v)(Device, void* nvml_temperature_v1) = nullptr;              // nvmlDeviceGetTemperatureV
  int (*temperature)(Device, int sensor, unsigned* celsius) = nullptr;            // nvmlDeviceGetTemperature
  int (*throttle)(Device, unsigned long long* reasons) = nullptr;                 // ...ClocksEventReasons
};
TelemetryReading read_nvml(const NvmlReadFunctions& f, NvmlReadFunctions::Device device);
// Names the NVML throttle bits that lower clocks below what the load asks for (idle and
// application-clock settings are not counted).
std::string throttle_reason_names(unsigned long long mask);
// Writes the telemetry cells of a row; empty cells when the reading is invalid.
void add_telemetry(Row& row, const TelemetryReading& r);

}  // namespace gpucal
