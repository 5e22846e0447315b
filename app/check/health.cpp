#include "app/check/health.h"
#include "app/check/cgroup_health.h"
#include "app/check/expectations.h"
#include "app/check/sysfs_read.h"
#include "app/check/xid_health.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace gpucal::check {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// NVML's clock event reasons (nvml.h, nvmlClocksEventReason*): the hardware slowed the clocks.
constexpr unsigned long long kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40, kHwPowerBrake = 0x80;

// "16.0 GT/s PCIe" -> 16.0; "Unknown", "" -> 0.
double link_rate(const std::string& text) {
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    return 0;
  }
}

void read_pcie(const fs::path& root, HealthReadings& r) {
  const fs::path dir = root / "bus/pci/devices";
  for (const auto& dev : sysfs_entries(dir, "")) {
    const auto speed = sysfs_line(dev / "current_link_speed"), max_speed = sysfs_line(dev / "max_link_speed");
    const auto width = sysfs_integer(dev / "current_link_width"), max_width = sysfs_integer(dev / "max_link_width");
    // Bridges and virtual functions without a trained link report "Unknown" or width 0.
    if (!speed || !max_speed || !width || !max_width || link_rate(*max_speed) <= 0 || *max_width <= 0) continue;
    r.pcie.push_back({dev.filename().string(), *speed, *max_speed, static_cast<int>(*width), static_cast<int>(*max_width)});
  }
  r.pcie_source = r.pcie.empty() ? "no PCI device under " + dir.string() + " exposes current_link_speed/width"
                                 : dir.string();
}

void read_edac(const fs::path& root, HealthReadings& r) {
  const fs::path dir = root / "devices/system/edac/mc";
  for (const auto& mc : sysfs_entries(dir, "mc")) {
    const auto ce = sysfs_integer(mc / "ce_count"), ue = sysfs_integer(mc / "ue_count");
    if (ce && ue) r.edac.push_back({mc.filename().string(), *ce, *ue});
  }
  r.edac_source = r.edac.empty() ? "no EDAC memory controller under " + dir.string() + " (no EDAC driver for this memory)"
                                 : dir.string();
}

void read_cpu_throttle(const fs::path& root, HealthReadings& r) {
  const fs::path dir = root / "devices/system/cpu";
  for (const auto& [index, cpu] : numbered_cpus(dir)) {
    const auto core = sysfs_integer(cpu / "thermal_throttle/core_throttle_count");
    const auto package = sysfs_integer(cpu / "thermal_throttle/package_throttle_count");
    if (core) r.cpu_throttle.push_back({index, *core, package.value_or(0)});
  }
  r.cpu_throttle_source = r.cpu_throttle.empty()
                              ? "no CPU under " + dir.string() + " exposes thermal_throttle/ (no therm_throt driver: a VM, or not Intel)"
                              : dir.string();
}

void read_cpu_clocks(const fs::path& root, HealthReadings& r) {
  const fs::path dir = root / "devices/system/cpu";
  r.cpu_clocks.clear();
  for (const auto& [index, cpu] : numbered_cpus(dir)) {
    const fs::path f = cpu / "cpufreq";
    const auto cur = sysfs_integer(f / "scaling_cur_freq"), max = sysfs_integer(f / "cpuinfo_max_freq");
    if (!cur || !max || *max <= 0) continue;
    r.cpu_clocks.push_back({index, *cur, sysfs_integer(f / "base_frequency").value_or(0), *max,
                            sysfs_integer(f / "scaling_max_freq").value_or(*max)});
  }
  r.cpu_clock_source = r.cpu_clocks.empty()
                           ? "no CPU under " + dir.string() + " exposes cpufreq/scaling_cur_freq (no cpufreq driver: a VM)"
                           : dir.string();
}

HealthLine health_line(const std::string& check, const std::string& subject, const std::string& status,
                const std::string& value, const std::string& detail = "") {
  return {check, subject, status, value, detail};
}

void judge_pcie(const HealthReadings& r, std::vector<HealthLine>& out) {
  if (r.pcie.empty()) out.push_back(health_line("pcie_link", "-", "not available", "-", r.pcie_source));
  for (const auto& p : r.pcie) {
    const std::string value = p.speed + " x" + std::to_string(p.width) + " of " + p.max_speed + " x" +
                              std::to_string(p.max_width);
    if (p.width < p.max_width)
      out.push_back(health_line("pcie_link", p.device, "fail", value, "link trained narrower than the device's maximum"));
    else if (link_rate(p.speed) < link_rate(p.max_speed))
      out.push_back(health_line("pcie_link", p.device, "warn", value,
                         "below the maximum speed: idle power saving lowers it; under load it is a fault"));
    else
      out.push_back(health_line("pcie_link", p.device, "pass", value));
  }
}

std::string mhz(long long khz) { return std::to_string((khz + 500) / 1000); }

// A core's clock under a scalar load: below 90% of its base clock is throttling (thermal, power
// or a firmware cap; a scalar load has no AVX offset to excuse it); a policy capping the clock
// below the base warns; without a base clock exposed, below half the maximum warns.
void judge_cpu_clocks(const HealthReadings& r, std::vector<HealthLine>& out) {
  if (r.cpu_clocks.empty()) return out.push_back(health_line("cpu_clock", "-", "not available", "-", r.cpu_clock_source));
  if (!r.cpu_clock_under_load)
    return out.push_back(health_line("cpu_clock", "-", "not available", "-", "read without a load: an idle core's clock says nothing"));
  for (const auto& c : r.cpu_clocks) {
    const std::string who = "cpu" + std::to_string(c.cpu);
    const long long reference = c.base_khz > 0 ? c.base_khz : c.max_khz;
    const std::string value = mhz(c.cur_khz) + " MHz of " + (c.base_khz > 0 ? "base " : "max ") + mhz(reference);
    if (c.policy_max_khz < reference * 9 / 10)
      out.push_back(health_line("cpu_clock", who, "warn", value, "scaling_max_freq caps it at " + mhz(c.policy_max_khz) + " MHz (a power policy)"));
    else if (c.base_khz > 0 && c.cur_khz < c.base_khz * 9 / 10)
      out.push_back(health_line("cpu_clock", who, "fail", value, "below 90% of its base clock under load: thermal or power throttling"));
    else if (c.base_khz <= 0 && c.cur_khz < c.max_khz / 2)
      out.push_back(health_line("cpu_clock", who, "warn", value, "under half its maximum under load (no base_frequency to judge by)"));
    else
      out.push_back(health_line("cpu_clock", who, "pass", value));
  }
}

void judge_host_counters(const HealthReadings& r, std::vector<HealthLine>& out) {
  if (r.edac.empty()) out.push_back(health_line("memory_ecc", "-", "not available", "-", r.edac_source));
  for (const auto& e : r.edac) {
    const std::string value = std::to_string(e.corrected) + " corrected, " + std::to_string(e.uncorrected) + " uncorrected";
    out.push_back(e.uncorrected > 0  ? health_line("memory_ecc", e.controller, "fail", value, "uncorrected memory errors")
                  : e.corrected > 0 ? health_line("memory_ecc", e.controller, "warn", value, "corrected memory errors")
                                    : health_line("memory_ecc", e.controller, "pass", value));
  }
  if (r.cpu_throttle.empty()) out.push_back(health_line("cpu_thermal_throttle", "-", "not available", "-", r.cpu_throttle_source));
  for (const auto& c : r.cpu_throttle) {
    const std::string value = std::to_string(c.core_count) + " core, " + std::to_string(c.package_count) + " package";
    out.push_back(c.core_count + c.package_count > 0
                      ? health_line("cpu_thermal_throttle", "cpu" + std::to_string(c.cpu), "warn", value,
                             "throttled since boot: look at cooling if the count grows")
                      : health_line("cpu_thermal_throttle", "cpu" + std::to_string(c.cpu), "pass", value));
  }
  judge_cpu_clocks(r, out);
  judge_cpu_quota(r, out);
}

std::string reading_text(const std::optional<unsigned long long>& v) { return v ? std::to_string(*v) : "-"; }
std::string reading_text(const std::optional<unsigned>& v) { return v ? std::to_string(*v) : "-"; }

void judge_gpu_memory(const GpuReading& g, const std::string& who, std::vector<HealthLine>& out) {
  if (!g.ecc_uncorrected_volatile && !g.ecc_corrected_volatile)
    out.push_back(health_line("gpu_ecc", who, "not available", "-", g.api + ": ECC is off or not supported on this GPU"));
  else {
    const std::string value = reading_text(g.ecc_corrected_volatile) + " corrected, " + reading_text(g.ecc_uncorrected_volatile) +
                              " uncorrected (volatile)";
    out.push_back(g.ecc_uncorrected_volatile.value_or(0) > 0 ? health_line("gpu_ecc", who, "fail", value, "uncorrected ECC errors since the driver loaded")
                  : g.ecc_corrected_volatile.value_or(0) > 0 ? health_line("gpu_ecc", who, "warn", value, "corrected ECC errors since the driver loaded")
                                                             : health_line("gpu_ecc", who, "pass", value));
  }
  if (g.remap_pending || g.remap_failure) {
    const bool pages = g.api == "ROCm SMI";  // AMD retires bad pages where NVIDIA remaps rows
    const std::string value = "pending " + reading_text(g.remap_pending) + (pages ? ", unretirable " : ", failure ") +
                              reading_text(g.remap_failure);
    out.push_back(g.remap_failure.value_or(0)
                      ? health_line("gpu_row_remap", who, "fail", value,
                                    pages ? "a bad page could not be retired: the GPU needs service"
                                          : "a row remap failed: the GPU needs service")
                  : g.remap_pending.value_or(0)
                      ? health_line("gpu_row_remap", who, "fail", value,
                                    pages ? "a bad page awaits retirement at the next reset: reset the GPU"
                                          : "a row remap is pending: reset the GPU")
                      : health_line("gpu_row_remap", who, "pass", value));
  } else if (g.retired_pages_pending) {
    const std::string value = "retired pages pending " + reading_text(g.retired_pages_pending);
    out.push_back(*g.retired_pages_pending ? health_line("gpu_row_remap", who, "fail", value, "page retirement pending: reset the GPU")
                                           : health_line("gpu_row_remap", who, "pass", value));
  } else {
    out.push_back(health_line("gpu_row_remap", who, "not available", "-", g.api + ": neither row remapping nor page retirement is read"));
  }
}

void judge_gpu_link_and_clocks(const GpuReading& g, const std::string& who, std::vector<HealthLine>& out) {
  if (!g.pcie_width || !g.pcie_width_max || !g.pcie_gen || !g.pcie_gen_max)
    out.push_back(health_line("gpu_pcie_link", who, "not available", "-", g.api + " gives no PCIe link generation and width"));
  else {
    const std::string value = "Gen" + reading_text(g.pcie_gen) + " x" + reading_text(g.pcie_width) + " of Gen" + reading_text(g.pcie_gen_max) +
                              " x" + reading_text(g.pcie_width_max);
    out.push_back(*g.pcie_width < *g.pcie_width_max ? health_line("gpu_pcie_link", who, "fail", value, "link trained narrower than the GPU's maximum")
                  : *g.pcie_gen < *g.pcie_gen_max  ? health_line("gpu_pcie_link", who, "warn", value, "below the maximum generation: an idle GPU lowers it; under load it is a fault")
                                                   : health_line("gpu_pcie_link", who, "pass", value));
  }
  if (!g.clock_event_reasons)
    out.push_back(health_line("gpu_clock_slowdown", who, "not available", "-", g.api + " gives no clock event reasons"));
  else {
    const unsigned long long m = *g.clock_event_reasons;
    char value[32];
    std::snprintf(value, sizeof value, "0x%llx", m);
    out.push_back(m & (kHwSlowdown | kHwThermal | kHwPowerBrake)
                      ? health_line("gpu_clock_slowdown", who, "fail", value, "hardware slowdown (HW slowdown, HW thermal or power brake)")
                  : m & kSwThermal ? health_line("gpu_clock_slowdown", who, "warn", value, "software thermal slowdown")
                                   : health_line("gpu_clock_slowdown", who, "pass", value));
  }
}

void judge_gpu_thermal_and_nvlink(const GpuReading& g, const std::string& who, std::vector<HealthLine>& out) {
  if (!g.temperature_c || !g.slowdown_temperature_c)
    out.push_back(health_line("gpu_temperature", who, "not available", reading_text(g.temperature_c), g.api + " gives no temperature or no slowdown threshold"));
  else {
    const std::string value = reading_text(g.temperature_c) + " C, slowdown at " + reading_text(g.slowdown_temperature_c) + " C";
    out.push_back(*g.temperature_c >= *g.slowdown_temperature_c ? health_line("gpu_temperature", who, "fail", value, "at the GPU's own slowdown threshold")
                  : *g.temperature_c + 5 >= *g.slowdown_temperature_c ? health_line("gpu_temperature", who, "warn", value, "within 5 C of the slowdown threshold")
                                                                      : health_line("gpu_temperature", who, "pass", value));
  }
  if (g.api != "NVML") {  // an AMD GPU's links: XGMI's error status
    if (!g.xgmi_error_status)
      out.push_back(health_line("gpu_xgmi", who, "not available", "-", g.api + " gives no XGMI error status (no XGMI, or not supported)"));
    else
      out.push_back(*g.xgmi_error_status == 0 ? health_line("gpu_xgmi", who, "pass", "no errors")
                                              : health_line("gpu_xgmi", who, "warn", *g.xgmi_error_status == 1 ? "an error" : "several errors",
                                                            "XGMI errors since the status was last reset"));
    return;
  }
  const long active = std::count_if(g.nvlinks.begin(), g.nvlinks.end(), [](const NvlinkReading& l) { return l.active; });
  if (active == 0) {
    out.push_back(health_line("gpu_nvlink", who, "not available", "-", "no active NVLink (a PCIe card, or NVLink not supported)"));
    return;
  }
  std::string down, errors;
  for (const auto& l : g.nvlinks) {
    if (!l.active) down += (down.empty() ? "" : ",") + std::to_string(l.link);
    if (l.replay.value_or(0) + l.recovery.value_or(0) + l.crc_flit.value_or(0) > 0)
      errors += (errors.empty() ? "" : "; ") + ("link " + std::to_string(l.link) + ": replay " + reading_text(l.replay) +
                                                ", recovery " + reading_text(l.recovery) + ", crc " + reading_text(l.crc_flit));
  }
  const std::string value = std::to_string(active) + " of " + std::to_string(g.nvlinks.size()) + " links up";
  out.push_back(!down.empty()     ? health_line("gpu_nvlink", who, "fail", value, "links down: " + down)
                : !errors.empty() ? health_line("gpu_nvlink", who, "warn", value, errors)
                                  : health_line("gpu_nvlink", who, "pass", value));
}

}  // namespace

void read_sysfs_health(const std::string& sysfs_root, HealthReadings& into) {
  read_pcie(sysfs_root, into);
  read_edac(sysfs_root, into);
  read_cpu_throttle(sysfs_root, into);
  read_cpu_clocks(sysfs_root, into);
  read_cpu_quota(sysfs_root, into);
}

void read_cpu_clocks_under_load(const std::string& sysfs_root, HealthReadings& into, double seconds) {
  if (into.cpu_clocks.empty() || seconds <= 0) return;
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
    spinners.emplace_back([&stop] {
      volatile unsigned long long x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  // cpufreq's current clock is an average over its last sample period: read it late in the load.
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  read_cpu_clocks(sysfs_root, into);
  stop = true;
  for (auto& t : spinners) t.join();
  into.cpu_clock_under_load = true;
}

std::vector<HealthLine> judge_health(const HealthReadings& r) {
  std::vector<HealthLine> out;
  judge_pcie(r, out);
  judge_host_counters(r, out);
  judge_xids(r, out);
  if (r.gpus.empty()) out.push_back(health_line("gpu", "-", "not available", "-", r.gpu_source.empty() ? "no GPU read" : r.gpu_source));
  for (const auto& g : r.gpus) {
    const std::string who = "gpu" + std::to_string(g.index);
    judge_gpu_memory(g, who, out);
    judge_gpu_link_and_clocks(g, who, out);
    judge_gpu_thermal_and_nvlink(g, who, out);
  }
  return out;
}

void judge_against_skus(const HealthReadings& r, const std::vector<Expectations>& skus, const std::string& skus_note,
                        std::vector<HealthLine>& out) {
  if (r.gpus.empty()) return;  // the gpu line says why
  bool any = false;
  for (const auto& g : r.gpus) {
    const std::string who = "gpu" + std::to_string(g.index);
    std::optional<Expectations> sku;
    try {
      sku = match_sku(skus, g.name, g.api == "NVML" ? "cuda" : "hip");
    } catch (const std::invalid_argument& e) {  // several files match: which one counts is unknown
      any = true;
      out.push_back(health_line("gpu_sku", who, "not available", "-", e.what()));
      continue;
    }
    if (!sku || (!sku->health.pcie_generation && !sku->health.nvlink_links)) continue;
    any = true;
    const HealthExpectation& h = sku->health;
    if (h.pcie_generation && h.pcie_width) {
      if (!g.pcie_gen_max || !g.pcie_width_max) {
        out.push_back(health_line("gpu_pcie_sku", who, "not available", "-", g.api + " gives no maximum PCIe generation and width"));
      } else {
        const std::string value = "Gen" + reading_text(g.pcie_gen_max) + " x" + reading_text(g.pcie_width_max) + " of Gen" +
                                  std::to_string(*h.pcie_generation) + " x" + std::to_string(*h.pcie_width);
        const bool short_of = *g.pcie_gen_max < static_cast<unsigned>(*h.pcie_generation) ||
                              *g.pcie_width_max < static_cast<unsigned>(*h.pcie_width);
        out.push_back(short_of ? health_line("gpu_pcie_sku", who, "fail", value,
                                             "the platform allows less than " + sku->sku + " links at (" + h.pcie_source + ")")
                               : health_line("gpu_pcie_sku", who, "pass", value));
      }
    }
    if (h.nvlink_links && g.api == "NVML") {
      if (g.nvlinks.empty()) {
        out.push_back(health_line("gpu_nvlink_count", who, "not available", "-",
                                  "NVML gives no NVLink state (" + sku->sku + " has " + std::to_string(*h.nvlink_links) + ")"));
      } else {
        const std::string value = std::to_string(g.nvlinks.size()) + " of " + std::to_string(*h.nvlink_links);
        out.push_back(g.nvlinks.size() < static_cast<std::size_t>(*h.nvlink_links)
                          ? health_line("gpu_nvlink_count", who, "fail", value,
                                        "fewer links than " + sku->sku + " has (" + h.nvlink_source + ")")
                          : health_line("gpu_nvlink_count", who, "pass", value));
      }
    }
  }
  if (!any)
    out.push_back(health_line("gpu_sku", "-", "not available", "-",
                              skus_note.empty() ? "no expectations file with a \"health\" object matches these GPUs" : skus_note));
}

std::string health_verdict(const std::vector<HealthLine>& lines) {
  bool any_fail = false, any_judged = false;
  for (const auto& l : lines) {
    any_fail |= l.status == "fail";
    any_judged |= l.status != "not available";
  }
  return any_fail ? "fail" : any_judged ? "pass" : "nothing checked";
}

std::string health_reason(const std::vector<HealthLine>& lines) {
  std::vector<std::string> failed;
  for (const auto& l : lines)
    if (l.status == "fail") failed.push_back(l.check + " " + l.subject + " " + l.value);
  if (failed.empty()) return health_verdict(lines) == "nothing checked" ? "nothing checked" : "";
  std::string reason = failed.front();
  if (failed.size() > 1) reason += " (+" + std::to_string(failed.size() - 1) + " more)";
  return reason;
}

}  // namespace gpucal::check
