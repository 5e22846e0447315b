// Device state around a measurement: SM and memory clocks, power, temperature and
// throttle reasons, read through NVML (loaded at run time with dlopen, so builds and hosts
// without the driver library simply report nothing). Read after a point's samples, while
// the device is still at its loaded state; throttling is flagged in the row.
#pragma once

#include <memory>
#include <string>

#include "harness/backend.h"
#include "harness/row.h"

namespace gpucal {

struct TelemetryReading {
  double sm_clock_mhz = -1, mem_clock_mhz = -1, power_w = -1, temp_c = -1;
  unsigned long long throttle_mask = 0;
  std::string throttle_reasons;  // "|"-joined names of the active reasons that cost speed; "" when none
  bool valid = false;
};

class Telemetry {
 public:
  virtual ~Telemetry() = default;
  virtual TelemetryReading read() = 0;
  virtual std::string source() const = 0;  // "nvml 12.x" or "none"
};

// NVML for CUDA devices (matched by PCI bus id); a null reader elsewhere.
std::unique_ptr<Telemetry> open_telemetry(const DeviceInfo& device);
// Names the NVML throttle bits that lower clocks below what the load asks for (idle and
// application-clock settings are not counted).
std::string throttle_reason_names(unsigned long long mask);
// Writes the telemetry cells of a row; empty cells when the reading is invalid.
void add_telemetry(Row& row, const TelemetryReading& r);

}  // namespace gpucal
