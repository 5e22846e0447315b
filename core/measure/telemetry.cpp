#include "core/measure/telemetry.h"

#include <dlfcn.h>

namespace gpucal {

namespace {

// The few NVML entry points used, declared from the documented C API (nvml.h is not part
// of the CUDA toolkit here; the ABI of these calls is stable across driver versions).
using nvmlDevice_t = NvmlReadFunctions::Device;
using nvmlReturn_t = int;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2, kNvmlTemperatureGpu = 0;

// nvmlTemperature_v1_t: {version, sensorType, temperature}; version = sizeof | 1 << 24
// (NVML_STRUCT_VERSION(Temperature, 1)).
struct NvmlTemperatureV1 {
  unsigned version;
  int sensor_type;
  int temperature;
};
constexpr unsigned kNvmlTemperatureV1 = static_cast<unsigned>(sizeof(NvmlTemperatureV1)) | (1u << 24);

struct NvmlApi {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  NvmlReadFunctions read;

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
  TelemetryReading read() override { return read_nvml(api_.read, dev_); }
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
  // Only these three are required; every reading entry point is optional (read_nvml).
  const bool ok = api.bind(api.init, "nvmlInit_v2") && api.bind(api.shutdown, "nvmlShutdown") &&
                  api.bind(api.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
  api.bind(api.read.clock, "nvmlDeviceGetClockInfo");
  api.bind(api.read.power, "nvmlDeviceGetPowerUsage");
  api.bind(api.read.temperature_v, "nvmlDeviceGetTemperatureV");
  api.bind(api.read.temperature, "nvmlDeviceGetTemperature");
  // Renamed "clocks event reasons" in newer drivers; the old name is still exported.
  if (!api.bind(api.read.throttle, "nvmlDeviceGetCurrentClocksEventReasons"))
    api.bind(api.read.throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
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

TelemetryReading read_nvml(const NvmlReadFunctions& f, NvmlReadFunctions::Device dev) {
  TelemetryReading r;
  unsigned v = 0;
  if (f.clock && f.clock(dev, kNvmlClockSm, &v) == kNvmlSuccess) r.sm_clock_mhz = v;
  if (f.clock && f.clock(dev, kNvmlClockMem, &v) == kNvmlSuccess) r.mem_clock_mhz = v;
  if (f.power && f.power(dev, &v) == kNvmlSuccess) r.power_w = v / 1000.0;
  NvmlTemperatureV1 t{kNvmlTemperatureV1, kNvmlTemperatureGpu, 0};
  if (f.temperature_v && f.temperature_v(dev, &t) == kNvmlSuccess)
    r.temp_c = t.temperature;
  else if (f.temperature && f.temperature(dev, kNvmlTemperatureGpu, &v) == kNvmlSuccess)
    r.temp_c = v;
  unsigned long long mask = 0;
  if (f.throttle && f.throttle(dev, &mask) == kNvmlSuccess) {
    r.throttle_mask = mask;
    r.throttle_known = true;
    r.throttle_reasons = throttle_reason_names(mask);
  }
  r.valid = r.sm_clock_mhz >= 0 || r.mem_clock_mhz >= 0 || r.power_w >= 0 || r.temp_c >= 0 || r.throttle_known;
  return r;
}

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
  if (r.sm_clock_mhz >= 0) row.set("sm_clock_mhz", r.sm_clock_mhz);
  if (r.mem_clock_mhz >= 0) row.set("mem_clock_mhz", r.mem_clock_mhz);
  if (r.power_w >= 0) row.set("power_w", r.power_w);
  if (r.temp_c >= 0) row.set("temp_c", r.temp_c);
  if (r.throttle_known) row.set("throttle_reasons", r.throttle_reasons);
}

}  // namespace gpucal
