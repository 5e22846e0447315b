#include "app/check/rsmi_health.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

// Built against ROCm SMI's own header where it is installed (Debian's librocm-smi-dev): every
// call below then has the header's exact signature. Without it the reader is compiled out and
// says so; gpucal never links the library, it opens it at run time like NVML.
#if __has_include(<rocm_smi/rocm_smi.h>)
#include <rocm_smi/rocm_smi.h>
#define GPUCAL_HAVE_ROCM_SMI_HEADER 1
#endif

namespace gpucal::check {

#ifdef GPUCAL_HAVE_ROCM_SMI_HEADER

namespace {

// Runs `f` with file descriptor 2 sent to /dev/null, and restores it.
template <typename F>
auto quiet_stderr(F f) {
  std::fflush(stderr);
  const int saved = dup(2), null = open("/dev/null", O_WRONLY);
  if (saved >= 0 && null >= 0) dup2(null, 2);
  auto result = f();
  std::fflush(stderr);
  if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
  }
  if (null >= 0) close(null);
  return result;
}

struct Rsmi {
  void* lib = nullptr;
  decltype(&rsmi_init) init = nullptr;
  decltype(&rsmi_shut_down) shutdown = nullptr;
  decltype(&rsmi_num_monitor_devices) count = nullptr;
  decltype(&rsmi_dev_name_get) name = nullptr;
  decltype(&rsmi_dev_ecc_enabled_get) ecc_enabled = nullptr;
  decltype(&rsmi_dev_ecc_count_get) ecc_count = nullptr;
  decltype(&rsmi_dev_memory_reserved_pages_get) reserved_pages = nullptr;
  decltype(&rsmi_dev_pci_bandwidth_get) pci_bandwidth = nullptr;
  decltype(&rsmi_dev_temp_metric_get) temperature = nullptr;
  decltype(&rsmi_dev_xgmi_error_status) xgmi_status = nullptr;
};

template <typename F>
void bind_rsmi_symbol(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

bool load_rsmi(Rsmi& r) {
  for (const char* soname : {"librocm_smi64.so.1", "librocm_smi64.so.5", "librocm_smi64.so"}) {
    r.lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (r.lib) break;
  }
  if (!r.lib) return false;
  bind_rsmi_symbol(r.lib, r.init, "rsmi_init");
  bind_rsmi_symbol(r.lib, r.shutdown, "rsmi_shut_down");
  bind_rsmi_symbol(r.lib, r.count, "rsmi_num_monitor_devices");
  bind_rsmi_symbol(r.lib, r.name, "rsmi_dev_name_get");
  bind_rsmi_symbol(r.lib, r.ecc_enabled, "rsmi_dev_ecc_enabled_get");
  bind_rsmi_symbol(r.lib, r.ecc_count, "rsmi_dev_ecc_count_get");
  bind_rsmi_symbol(r.lib, r.reserved_pages, "rsmi_dev_memory_reserved_pages_get");
  bind_rsmi_symbol(r.lib, r.pci_bandwidth, "rsmi_dev_pci_bandwidth_get");
  bind_rsmi_symbol(r.lib, r.temperature, "rsmi_dev_temp_metric_get");
  bind_rsmi_symbol(r.lib, r.xgmi_status, "rsmi_dev_xgmi_error_status");
  return r.init && r.shutdown && r.count;
}

// ECC counts summed over the blocks that have ECC enabled (UMC is the HBM's).
void read_rsmi_ecc(const Rsmi& r, uint32_t d, GpuReading& g) {
  uint64_t enabled = 0;
  if (!r.ecc_enabled || !r.ecc_count || r.ecc_enabled(d, &enabled) != RSMI_STATUS_SUCCESS || enabled == 0) return;
  unsigned long long corrected = 0, uncorrected = 0;
  bool any = false;
  for (uint64_t block = RSMI_GPU_BLOCK_FIRST; block <= RSMI_GPU_BLOCK_LAST; block <<= 1) {
    if (!(enabled & block)) continue;
    rsmi_error_count_t ec{};
    if (r.ecc_count(d, static_cast<rsmi_gpu_block_t>(block), &ec) != RSMI_STATUS_SUCCESS) continue;
    corrected += ec.correctable_err;
    uncorrected += ec.uncorrectable_err;
    any = true;
  }
  if (any) {
    g.ecc_corrected_volatile = corrected;
    g.ecc_uncorrected_volatile = uncorrected;
  }
}

// Bad pages: those still pending retirement (retired at the next reset) and those the driver
// could not retire.
void read_rsmi_bad_pages(const Rsmi& r, uint32_t d, GpuReading& g) {
  uint32_t n = 0;
  if (!r.reserved_pages || r.reserved_pages(d, &n, nullptr) != RSMI_STATUS_SUCCESS) return;
  std::vector<rsmi_retired_page_record_t> records(n);
  if (n > 0 && r.reserved_pages(d, &n, records.data()) != RSMI_STATUS_SUCCESS) return;
  unsigned pending = 0, unreservable = 0;
  for (uint32_t i = 0; i < n && i < records.size(); ++i) {
    pending += records[i].status == RSMI_MEM_PAGE_STATUS_PENDING;
    unreservable += records[i].status == RSMI_MEM_PAGE_STATUS_UNRESERVABLE;
  }
  g.remap_pending = pending;
  g.remap_failure = unreservable;
}

// PCIe: the current transfer rate and lanes against the fastest the device lists.
void read_rsmi_pcie(const Rsmi& r, uint32_t d, GpuReading& g) {
  rsmi_pcie_bandwidth_t bw{};
  if (!r.pci_bandwidth || r.pci_bandwidth(d, &bw) != RSMI_STATUS_SUCCESS) return;
  const uint32_t n = bw.transfer_rate.num_supported;
  if (n == 0 || n > RSMI_MAX_NUM_FREQUENCIES || bw.transfer_rate.current >= n) return;
  uint32_t best = 0;
  for (uint32_t i = 1; i < n; ++i)
    if (bw.transfer_rate.frequency[i] > bw.transfer_rate.frequency[best]) best = i;
  const uint32_t now = bw.transfer_rate.current;
  g.pcie_gen = pcie_generation_of_rate(static_cast<double>(bw.transfer_rate.frequency[now]));
  g.pcie_gen_max = pcie_generation_of_rate(static_cast<double>(bw.transfer_rate.frequency[best]));
  g.pcie_width = bw.lanes[now];
  g.pcie_width_max = bw.lanes[best];
  if (*g.pcie_gen == 0 || *g.pcie_gen_max == 0) g.pcie_gen = g.pcie_gen_max = std::nullopt;
}

// The junction (hotspot) temperature against its critical limit, in millidegrees.
void read_rsmi_temperature(const Rsmi& r, uint32_t d, GpuReading& g) {
  if (!r.temperature) return;
  int64_t now = 0, limit = 0;
  if (r.temperature(d, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT, &now) != RSMI_STATUS_SUCCESS) return;
  g.temperature_c = static_cast<unsigned>(now < 0 ? 0 : now / 1000);
  if (r.temperature(d, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CRITICAL, &limit) == RSMI_STATUS_SUCCESS && limit > 0)
    g.slowdown_temperature_c = static_cast<unsigned>(limit / 1000);
}

GpuReading read_rsmi_gpu(const Rsmi& r, uint32_t d) {
  GpuReading g;
  g.index = static_cast<int>(d);
  g.api = "ROCm SMI";
  char name[96] = {};
  if (r.name && r.name(d, name, sizeof name) == RSMI_STATUS_SUCCESS) g.name = name;
  read_rsmi_ecc(r, d, g);
  read_rsmi_bad_pages(r, d, g);
  read_rsmi_pcie(r, d, g);
  read_rsmi_temperature(r, d, g);
  rsmi_xgmi_status_t xgmi{};
  if (r.xgmi_status && r.xgmi_status(d, &xgmi) == RSMI_STATUS_SUCCESS) g.xgmi_error_status = static_cast<unsigned>(xgmi);
  return g;
}

}  // namespace

void read_rsmi_health(HealthReadings& into) {
  Rsmi r;
  if (!load_rsmi(r)) {
    into.gpu_source = r.lib ? "librocm_smi64 lacks rsmi_init or the device calls" : "no ROCm SMI (librocm_smi64.so.1 not found)";
    if (r.lib) dlclose(r.lib);
    return;
  }
  // rsmi_init prints its own complaints ("Failed to open drm root directory ...", "Exception
  // caught: rsmi_init.") to stderr on a node without amdgpu; gpucal says why in its table instead.
  if (const rsmi_status_t rc = quiet_stderr([&] { return r.init(0); }); rc != RSMI_STATUS_SUCCESS) {
    into.gpu_source = "rsmi_init failed with ROCm SMI status " + std::to_string(static_cast<int>(rc)) +
                      " (is the amdgpu driver loaded?)";
    dlclose(r.lib);
    return;
  }
  uint32_t count = 0;
  if (r.count(&count) != RSMI_STATUS_SUCCESS) count = 0;
  for (uint32_t i = 0; i < count; ++i) into.gpus.push_back(read_rsmi_gpu(r, i));
  into.gpu_source = count == 0 ? "ROCm SMI lists no GPU" : "ROCm SMI, " + std::to_string(count) + " GPU(s)";
  r.shutdown();
  dlclose(r.lib);
}

#else

void read_rsmi_health(HealthReadings& into) {
  into.gpu_source = "built without ROCm SMI's header (librocm-smi-dev): AMD GPUs are not read";
}

#endif

unsigned pcie_generation_of_rate(double transfers_per_s) {
  // PCIe's per-lane rates: 2.5, 5, 8, 16, 32, 64 GT/s for generations 1 to 6.
  const double gt = transfers_per_s / 1e9;
  const double rates[] = {2.5, 5, 8, 16, 32, 64};
  for (unsigned i = 0; i < 6; ++i)
    if (gt > rates[i] * 0.9 && gt < rates[i] * 1.1) return i + 1;
  return 0;
}

}  // namespace gpucal::check
