// `gpucal check --health`: the node's health, not its speed. Each check is named, judged pass,
// warn, fail or "not available" (the hardware or the kernel does not expose it: never a pass),
// and carries the raw value it judged. Readings come from sysfs on every host (PCIe links of
// every PCI device, EDAC memory error counts, CPU thermal-throttle counters) and from NVML on an
// NVIDIA node (app/check/nvml_health.h) or ROCm SMI on an AMD one (app/check/rsmi_health.h); a recorded readings file (`--health-from`, the
// "readings" object of `--json`) is judged by the same rules. The rules and their sources:
// docs/operators.md, "Health checks".
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpucal::check {

struct PcieLinkReading {
  std::string device;  // PCI address, 0000:3b:00.0
  std::string speed, max_speed;  // sysfs text, "16.0 GT/s PCIe"; GPU: "Gen4"
  int width = 0, max_width = 0;
};

struct EdacReading {
  std::string controller;  // mc0
  long long corrected = 0, uncorrected = 0;
};

struct CpuThrottleReading {
  int cpu = 0;
  long long core_count = 0, package_count = 0;
};

// A CPU's clock as cpufreq reports it (kHz): scaling_cur_freq read while every core ran a scalar
// load (cpu_clock_under_load), base_frequency (intel_pstate; 0 when not exposed),
// cpuinfo_max_freq and scaling_max_freq (the policy's cap).
struct CpuClockReading {
  int cpu = 0;
  long long cur_khz = 0, base_khz = 0, max_khz = 0, policy_max_khz = 0;
};

struct NvlinkReading {
  int link = 0;
  bool active = false;
  std::optional<unsigned long long> replay, recovery, crc_flit;
};

// One GPU as NVML or ROCm SMI reports it; nullopt where the device does not support the query.
struct GpuReading {
  int index = 0;
  std::string name;
  std::string api = "NVML";  // the library that read it: NVML or ROCm SMI
  std::optional<unsigned long long> ecc_uncorrected_volatile, ecc_corrected_volatile;
  std::optional<unsigned> remap_pending, remap_failure, retired_pages_pending;
  std::optional<unsigned> pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
  std::optional<unsigned long long> clock_event_reasons;  // NVML's bit mask
  std::optional<unsigned> temperature_c, slowdown_temperature_c;
  std::vector<NvlinkReading> nvlinks;
  std::optional<unsigned> xgmi_error_status;  // ROCm SMI's rsmi_xgmi_status_t: 0 none, 1 an error, 2 several
};

// One NVIDIA Xid line of the kernel log (app/check/xid_health.h).
struct XidEvent {
  std::string pci;  // the log's address, 0000:3b:00
  int xid = 0;
  double seconds_since_boot = -1;  // the line's timestamp; -1 when it has none
  std::string text;
};

// The CPU quota of the process's cgroup (app/check/cgroup_health.h).
struct CpuQuotaReading {
  std::string cgroup;       // the process's cgroup, "/slurm/uid_0/job_12"
  std::string bound_by;     // the cgroup whose quota binds (it or one above it)
  double limit_cpus = 0;    // quota / period; 0: no quota
  int allowed_cpus = 0;     // the CPUs the process may run on (its affinity)
};

// What a node exposes. `*_source` says where a kind was read, or why it is not available.
struct HealthReadings {
  std::vector<PcieLinkReading> pcie;
  std::string pcie_source;
  std::vector<EdacReading> edac;
  std::string edac_source;
  std::vector<CpuThrottleReading> cpu_throttle;
  std::string cpu_throttle_source;
  std::vector<CpuClockReading> cpu_clocks;
  std::string cpu_clock_source;
  bool cpu_clock_under_load = false;  // the clocks were read while every core was busy
  std::optional<CpuQuotaReading> cpu_quota;
  std::string cpu_quota_source;
  std::vector<GpuReading> gpus;
  std::string gpu_source;
  std::vector<XidEvent> xids;
  bool xid_read = false;  // the kernel log was read (no Xid in it is a pass only then)
  std::string xid_source;
};

struct HealthLine {
  std::string check, subject, status, value, detail;  // status: pass | warn | fail | not available
};

// Reads PCIe, EDAC and CPU thermal-throttle counters and the CPUs' cpufreq clocks under
// `sysfs_root` (/sys, or a copy).
void read_sysfs_health(const std::string& sysfs_root, HealthReadings& into);

// Where cpufreq is exposed: runs a scalar spin on every core for `seconds` and reads the clocks
// again near its end (an idle core's clock says nothing of throttling); sets cpu_clock_under_load.
void read_cpu_clocks_under_load(const std::string& sysfs_root, HealthReadings& into, double seconds);

// The judged lines, one per check and subject; a kind with no readings gives one "not available"
// line naming why.
std::vector<HealthLine> judge_health(const HealthReadings& r);

// Against each GPU's SKU (expectations/*.json "health": the PCIe generation and width the SKU
// links at, its NVLink count), for what the device cannot say of itself (a GPU reports the
// generation its platform allows as its maximum): gpu_pcie_sku, gpu_nvlink_count. `skus_note` says
// why there are none when `skus` is empty.
struct Expectations;
void judge_against_skus(const HealthReadings& r, const std::vector<Expectations>& skus, const std::string& skus_note,
                        std::vector<HealthLine>& out);

// "pass" when something passed and nothing failed, "fail" on any fail, "nothing checked" when every
// line is "not available" (a gate that checked nothing fails closed).
std::string health_verdict(const std::vector<HealthLine>& lines);

// The first failing line (check, subject, value) and how many more failed, as one line; "nothing
// checked" when nothing was; "" on a pass.
std::string health_reason(const std::vector<HealthLine>& lines);

nlohmann::json readings_to_json(const HealthReadings& r);
// Throws std::invalid_argument naming `path` and the field on a malformed readings document.
HealthReadings readings_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace gpucal::check
