#include <gtest/gtest.h>

#include "harness/telemetry.h"

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
  r.throttle_reasons = "sw_thermal";
  add_telemetry(row, r);
  EXPECT_EQ(row.get("sm_clock_mhz"), "1980");
  EXPECT_EQ(row.get("throttle_reasons"), "sw_thermal");
}
