#include <gtest/gtest.h>

#include "core/measure/telemetry.h"

using namespace gpucal;

TEST(Telemetry, ThrottleReasonNamesOnlyCountSlowdowns) {
  EXPECT_EQ(throttle_reason_names(0), "");
  EXPECT_EQ(throttle_reason_names(0x1 | 0x2), "");  // idle and application-clock setting
  EXPECT_EQ(throttle_reason_names(0x4), "sw_power_cap");
  EXPECT_EQ(throttle_reason_names(0x8 | 0x40), "hw_slowdown|hw_thermal");
}

TEST(Telemetry, HostHasNoReaderAndWritesNoCells) {
  DeviceInfo host;
  host.backend = "host";
  auto t = open_telemetry(host);
  EXPECT_EQ(t->source(), "none");
  TelemetryReading r = t->read();
  EXPECT_FALSE(r.valid);
  Row row;
  add_telemetry(row, r);
  EXPECT_TRUE(row.cells().empty());
  r.valid = true;
  r.sm_clock_mhz = 1980;
  r.throttle_known = true;
  r.throttle_reasons = "sw_thermal";
  add_telemetry(row, r);
  EXPECT_EQ(row.get("sm_clock_mhz"), "1980");
  EXPECT_EQ(row.get("throttle_reasons"), "sw_thermal");
  EXPECT_FALSE(row.has("power_w"));  // not read: no cell
}

// NVML through a table of fake entry points: each missing one blanks its own column only.
namespace {
int fake_clock(void*, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1755 : 2619;  // NVML_CLOCK_SM, NVML_CLOCK_MEM
  return 0;
}
int fake_power(void*, unsigned* mw) {
  *mw = 512000;
  return 0;
}
int fake_temperature_v(void*, void* t) {
  struct V1 {
    unsigned version;
    int sensor;
    int temperature;
  };
  auto* v = static_cast<V1*>(t);
  if (v->version != (sizeof(V1) | (1u << 24)) || v->sensor != 0) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  v->temperature = 61;
  return 0;
}
int fake_temperature(void*, int, unsigned* c) {
  *c = 58;
  return 0;
}
int fake_throttle(void*, unsigned long long* mask) {
  *mask = 0x4;
  return 0;
}
int failing_power(void*, unsigned*) { return 3; }  // NVML_ERROR_NOT_SUPPORTED
}  // namespace

TEST(Telemetry, NvmlNewTemperatureCallPreferredOldOneAFallback) {
  NvmlReadFunctions f{fake_clock, fake_power, fake_temperature_v, fake_temperature, fake_throttle};
  TelemetryReading r = read_nvml(f, nullptr);
  EXPECT_TRUE(r.valid);
  EXPECT_EQ(r.sm_clock_mhz, 1755);
  EXPECT_EQ(r.mem_clock_mhz, 2619);
  EXPECT_EQ(r.power_w, 512);
  EXPECT_EQ(r.temp_c, 61);  // nvmlDeviceGetTemperatureV, versioned struct
  EXPECT_EQ(r.throttle_reasons, "sw_power_cap");
  f.temperature_v = nullptr;  // an older driver: the deprecated call
  EXPECT_EQ(read_nvml(f, nullptr).temp_c, 58);
}

TEST(Telemetry, NvmlMissingEntryPointsBlankOnlyTheirColumns) {
  NvmlReadFunctions f{fake_clock, failing_power, nullptr, nullptr, nullptr};  // NVML 13 without the old call
  TelemetryReading r = read_nvml(f, nullptr);
  EXPECT_TRUE(r.valid);
  Row row;
  add_telemetry(row, r);
  EXPECT_EQ(row.get("sm_clock_mhz"), "1755");
  EXPECT_EQ(row.get("mem_clock_mhz"), "2619");
  EXPECT_FALSE(row.has("power_w"));
  EXPECT_FALSE(row.has("temp_c"));
  EXPECT_FALSE(row.has("throttle_reasons"));
  EXPECT_FALSE(read_nvml(NvmlReadFunctions{}, nullptr).valid);  // nothing at all: no cells
}
