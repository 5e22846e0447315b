#include "app/check/nvml_health.h"

#include <dlfcn.h>

#include <string>

namespace gpucal::check {

namespace {

// NVML's types and constants as nvml.h defines them.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr unsigned kMemoryErrorCorrected = 0, kMemoryErrorUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr unsigned kVolatileEcc = 0;                                         // nvmlEccCounterType_t
constexpr unsigned kTemperatureGpu = 0;                                      // nvmlTemperatureSensors_t
constexpr unsigned kTemperatureThresholdSlowdown = 1;                        // nvmlTemperatureThresholds_t
constexpr unsigned kNvlinkReplay = 0, kNvlinkRecovery = 1, kNvlinkCrcFlit = 2;  // nvmlNvLinkErrorCounter_t
constexpr unsigned kNvlinkMaxLinks = 18;                                     // NVML_NVLINK_MAX_LINKS

struct Nvml {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, unsigned, unsigned, unsigned long long*) = nullptr;
  nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*retired_pending)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*gen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*gen_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*width_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*threshold)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*link_state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*link_errors)(nvmlDevice_t, unsigned, unsigned, unsigned long long*) = nullptr;
};

template <typename F>
void bind_symbol(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

bool load_nvml(Nvml& n) {
  n.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) return false;
  bind_symbol(n.lib, n.init, "nvmlInit_v2");
  bind_symbol(n.lib, n.shutdown, "nvmlShutdown");
  bind_symbol(n.lib, n.count, "nvmlDeviceGetCount_v2");
  bind_symbol(n.lib, n.handle, "nvmlDeviceGetHandleByIndex_v2");
  bind_symbol(n.lib, n.name, "nvmlDeviceGetName");
  bind_symbol(n.lib, n.ecc, "nvmlDeviceGetTotalEccErrors");
  bind_symbol(n.lib, n.remapped, "nvmlDeviceGetRemappedRows");
  bind_symbol(n.lib, n.retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
  bind_symbol(n.lib, n.gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  bind_symbol(n.lib, n.gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  bind_symbol(n.lib, n.width, "nvmlDeviceGetCurrPcieLinkWidth");
  bind_symbol(n.lib, n.width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  bind_symbol(n.lib, n.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!n.reasons) bind_symbol(n.lib, n.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");  // before CUDA 12.2
  bind_symbol(n.lib, n.temperature, "nvmlDeviceGetTemperature");
  bind_symbol(n.lib, n.threshold, "nvmlDeviceGetTemperatureThreshold");
  bind_symbol(n.lib, n.link_state, "nvmlDeviceGetNvLinkState");
  bind_symbol(n.lib, n.link_errors, "nvmlDeviceGetNvLinkErrorCounter");
  return n.init && n.shutdown && n.count && n.handle;
}

// One query: the value when the call exists and succeeds, nullopt when unsupported.
template <typename T, typename F, typename... A>
std::optional<T> nvml_query(F f, A... args) {
  T v{};
  if (!f || f(args..., &v) != kSuccess) return std::nullopt;
  return v;
}

void read_gpu_memory(const Nvml& n, nvmlDevice_t d, GpuReading& g) {
  g.ecc_uncorrected_volatile = nvml_query<unsigned long long>(n.ecc, d, kMemoryErrorUncorrected, kVolatileEcc);
  g.ecc_corrected_volatile = nvml_query<unsigned long long>(n.ecc, d, kMemoryErrorCorrected, kVolatileEcc);
  unsigned corrected = 0, uncorrected = 0, pending = 0, failure = 0;
  if (n.remapped && n.remapped(d, &corrected, &uncorrected, &pending, &failure) == kSuccess) {
    g.remap_pending = pending;
    g.remap_failure = failure;
  } else if (const auto retired = nvml_query<int>(n.retired_pending, d)) {
    g.retired_pages_pending = *retired != 0;
  }
}

GpuReading read_nvml_gpu(const Nvml& n, unsigned index, nvmlDevice_t d) {
  GpuReading g;
  g.index = static_cast<int>(index);
  char name[96] = {};
  if (n.name && n.name(d, name, sizeof name) == kSuccess) g.name = name;
  read_gpu_memory(n, d, g);
  g.pcie_gen = nvml_query<unsigned>(n.gen, d);
  g.pcie_gen_max = nvml_query<unsigned>(n.gen_max, d);
  g.pcie_width = nvml_query<unsigned>(n.width, d);
  g.pcie_width_max = nvml_query<unsigned>(n.width_max, d);
  g.clock_event_reasons = nvml_query<unsigned long long>(n.reasons, d);
  g.temperature_c = nvml_query<unsigned>(n.temperature, d, kTemperatureGpu);
  g.slowdown_temperature_c = nvml_query<unsigned>(n.threshold, d, kTemperatureThresholdSlowdown);
  for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
    const auto state = nvml_query<int>(n.link_state, d, link);
    if (!state) continue;  // the link does not exist on this GPU
    g.nvlinks.push_back({static_cast<int>(link), *state != 0, nvml_query<unsigned long long>(n.link_errors, d, link, kNvlinkReplay),
                         nvml_query<unsigned long long>(n.link_errors, d, link, kNvlinkRecovery),
                         nvml_query<unsigned long long>(n.link_errors, d, link, kNvlinkCrcFlit)});
  }
  return g;
}

}  // namespace

void read_nvml_health(HealthReadings& into) {
  Nvml n;
  if (!load_nvml(n)) {
    into.gpu_source = n.lib ? "libnvidia-ml.so.1 lacks nvmlInit_v2 or the device calls" : "no NVIDIA driver (libnvidia-ml.so.1 not found)";
    if (n.lib) dlclose(n.lib);
    return;
  }
  if (const nvmlReturn_t rc = n.init(); rc != kSuccess) {
    into.gpu_source = "nvmlInit_v2 failed with NVML error " + std::to_string(rc) + " (is the driver loaded?)";
    dlclose(n.lib);
    return;
  }
  unsigned count = 0;
  if (n.count(&count) != kSuccess) count = 0;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    if (n.handle(i, &d) == kSuccess) into.gpus.push_back(read_nvml_gpu(n, i, d));
  }
  into.gpu_source = count == 0 ? "NVML lists no GPU" : "NVML, " + std::to_string(count) + " GPU(s)";
  n.shutdown();
  dlclose(n.lib);
}

}  // namespace gpucal::check
