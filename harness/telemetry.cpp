#include "harness/telemetry.h"

#include <dlfcn.h>

namespace gpucal {

namespace {

// The few NVML entry points used, declared from the documented C API (nvml.h is not part
// of the CUDA toolkit here; the ABI of these calls is stable across driver versions).
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlReturn_t = int;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2, kNvmlTemperatureGpu = 0;

struct NvmlApi {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;

  template <typename F>
  bool bind(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }
};

class NvmlTelemetry : public Telemetry {
 public:
  NvmlTelemetry(NvmlApi api, nvmlDevice_t dev, std::string version) : api_(api), dev_(dev), version_(std::move(version)) {}
  ~NvmlTelemetry() override {
    api_.shutdown();
    dlclose(api_.lib);
  }
  TelemetryReading read() override {
    TelemetryReading r;
    unsigned v = 0;
    if (api_.clock(dev_, kNvmlClockSm, &v) == kNvmlSuccess) r.sm_clock_mhz = v;
    if (api_.clock(dev_, kNvmlClockMem, &v) == kNvmlSuccess) r.mem_clock_mhz = v;
    if (api_.power(dev_, &v) == kNvmlSuccess) r.power_w = v / 1000.0;
    if (api_.temperature(dev_, kNvmlTemperatureGpu, &v) == kNvmlSuccess) r.temp_c = v;
    unsigned long long mask = 0;
    if (api_.throttle && api_.throttle(dev_, &mask) == kNvmlSuccess) {
      r.throttle_mask = mask;
      r.throttle_reasons = throttle_reason_names(mask);
    }
    r.valid = r.sm_clock_mhz >= 0;
    return r;
  }
  std::string source() const override { return "nvml (driver " + version_ + ")"; }

 private:
  NvmlApi api_;
  nvmlDevice_t dev_;
  std::string version_;
};

class NoTelemetry : public Telemetry {
 public:
  TelemetryReading read() override { return {}; }
  std::string source() const override { return "none"; }
};

std::unique_ptr<Telemetry> open_nvml(const DeviceInfo& device) {
  NvmlApi api;
  api.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api.lib) return nullptr;
  bool ok = api.bind(api.init, "nvmlInit_v2") && api.bind(api.shutdown, "nvmlShutdown") &&
            api.bind(api.by_pci, "nvmlDeviceGetHandleByPciBusId_v2") && api.bind(api.clock, "nvmlDeviceGetClockInfo") &&
            api.bind(api.power, "nvmlDeviceGetPowerUsage") && api.bind(api.temperature, "nvmlDeviceGetTemperature");
  // Renamed "clocks event reasons" in newer drivers; the old name is still exported.
  if (!api.bind(api.throttle, "nvmlDeviceGetCurrentClocksEventReasons"))
    api.bind(api.throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  api.bind(api.driver_version, "nvmlSystemGetDriverVersion");
  if (!ok || api.init() != kNvmlSuccess) {
    dlclose(api.lib);
    return nullptr;
  }
  nvmlDevice_t dev = nullptr;
  if (api.by_pci(device.pci_bus_id.c_str(), &dev) != kNvmlSuccess) {
    api.shutdown();
    dlclose(api.lib);
    return nullptr;
  }
  char version[96] = {0};
  if (api.driver_version) api.driver_version(version, sizeof version);
  return std::make_unique<NvmlTelemetry>(api, dev, version);
}

}  // namespace

std::string throttle_reason_names(unsigned long long mask) {
  // NVML clocks-event reason bits (nvml.h): only those that slow a loaded device.
  static const std::pair<unsigned long long, const char*> kReasons[] = {
      {0x4ull, "sw_power_cap"},   {0x8ull, "hw_slowdown"},     {0x20ull, "sw_thermal"},
      {0x40ull, "hw_thermal"},    {0x80ull, "hw_power_brake"}, {0x100ull, "display_clock"},
  };
  std::string names;
  for (const auto& [bit, name] : kReasons)
    if (mask & bit) names += (names.empty() ? "" : "|") + std::string(name);
  return names;
}

std::unique_ptr<Telemetry> open_telemetry(const DeviceInfo& device) {
  if (device.backend == "cuda" && !device.pci_bus_id.empty())
    if (auto t = open_nvml(device)) return t;
  return std::make_unique<NoTelemetry>();
}

void add_telemetry(Row& row, const TelemetryReading& r) {
  if (!r.valid) return;
  row.set("sm_clock_mhz", r.sm_clock_mhz)
      .set("mem_clock_mhz", r.mem_clock_mhz)
      .set("power_w", r.power_w)
      .set("temp_c", r.temp_c)
      .set("throttle_reasons", r.throttle_reasons);
}

}  // namespace gpucal
