// The health readings as JSON: `gpucal check --health --json F` writes them beside the verdicts,
// and `--health-from F` judges a recorded document by the same rules (app/check/health.h).
#include <stdexcept>

#include "app/check/health.h"

namespace gpucal::check {

using nlohmann::json;

namespace {

template <typename T>
json json_or_null(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

[[noreturn]] void bad_readings(const std::string& path, const std::string& what) {
  throw std::invalid_argument(path + ": " + what);
}

const json& readings_array(const json& j, const char* key, const std::string& path) {
  static const json empty = json::array();
  if (!j.contains(key) || j[key].is_null()) return empty;
  if (!j[key].is_array()) bad_readings(path, std::string("readings.") + key + " must be an array");
  return j[key];
}

template <typename T>
T required_number(const json& j, const char* key, const std::string& path, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number()) bad_readings(path, where + "." + key + " must be a number");
  return j[key].get<T>();
}

template <typename T>
std::optional<T> optional_reading(const json& j, const char* key, const std::string& path, const std::string& where) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number() || (std::is_unsigned_v<T> && j[key].get<double>() < 0))
    bad_readings(path, where + "." + key + " must be a " + (std::is_unsigned_v<T> ? "non-negative " : "") + "number or null");
  return j[key].get<T>();
}

std::string readings_string(const json& j, const char* key, const std::string& path, const std::string& where) {
  if (!j.contains(key) || !j[key].is_string()) bad_readings(path, where + "." + key + " must be a string");
  return j[key].get<std::string>();
}

GpuReading gpu_from(const json& g, const std::string& path, const std::string& where) {
  GpuReading r;
  r.index = required_number<int>(g, "index", path, where);
  r.name = g.value("name", "");
  if (g.contains("api") && !g["api"].is_null()) {
    r.api = readings_string(g, "api", path, where);
    if (r.api != "NVML" && r.api != "ROCm SMI") bad_readings(path, where + ".api must be \"NVML\" or \"ROCm SMI\"");
  }
  r.xgmi_error_status = optional_reading<unsigned>(g, "xgmi_error_status", path, where);
  if (r.xgmi_error_status && *r.xgmi_error_status > 2) bad_readings(path, where + ".xgmi_error_status must be 0, 1 or 2");
  r.ecc_uncorrected_volatile = optional_reading<unsigned long long>(g, "ecc_uncorrected_volatile", path, where);
  r.ecc_corrected_volatile = optional_reading<unsigned long long>(g, "ecc_corrected_volatile", path, where);
  r.remap_pending = optional_reading<unsigned>(g, "remap_pending", path, where);
  r.remap_failure = optional_reading<unsigned>(g, "remap_failure", path, where);
  r.retired_pages_pending = optional_reading<unsigned>(g, "retired_pages_pending", path, where);
  r.pcie_gen = optional_reading<unsigned>(g, "pcie_gen", path, where);
  r.pcie_gen_max = optional_reading<unsigned>(g, "pcie_gen_max", path, where);
  r.pcie_width = optional_reading<unsigned>(g, "pcie_width", path, where);
  r.pcie_width_max = optional_reading<unsigned>(g, "pcie_width_max", path, where);
  r.clock_event_reasons = optional_reading<unsigned long long>(g, "clock_event_reasons", path, where);
  r.temperature_c = optional_reading<unsigned>(g, "temperature_c", path, where);
  r.slowdown_temperature_c = optional_reading<unsigned>(g, "slowdown_temperature_c", path, where);
  const json& links = readings_array(g, "nvlinks", path);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const std::string w = where + ".nvlinks[" + std::to_string(i) + "]";
    if (!links[i].contains("active") || !links[i]["active"].is_boolean()) bad_readings(path, w + ".active must be true or false");
    r.nvlinks.push_back({required_number<int>(links[i], "link", path, w), links[i]["active"].get<bool>(),
                         optional_reading<unsigned long long>(links[i], "replay", path, w),
                         optional_reading<unsigned long long>(links[i], "recovery", path, w),
                         optional_reading<unsigned long long>(links[i], "crc_flit", path, w)});
  }
  return r;
}

}  // namespace

json readings_to_json(const HealthReadings& r) {
  json j = {{"pcie", json::array()}, {"pcie_source", r.pcie_source}, {"edac", json::array()},
            {"edac_source", r.edac_source}, {"cpu_throttle", json::array()}, {"cpu_throttle_source", r.cpu_throttle_source},
            {"gpus", json::array()}, {"gpu_source", r.gpu_source}};
  for (const auto& p : r.pcie)
    j["pcie"].push_back({{"device", p.device}, {"speed", p.speed}, {"max_speed", p.max_speed}, {"width", p.width}, {"max_width", p.max_width}});
  for (const auto& e : r.edac)
    j["edac"].push_back({{"controller", e.controller}, {"corrected", e.corrected}, {"uncorrected", e.uncorrected}});
  for (const auto& c : r.cpu_throttle)
    j["cpu_throttle"].push_back({{"cpu", c.cpu}, {"core_count", c.core_count}, {"package_count", c.package_count}});
  j["cpu_clocks"] = json::array();
  for (const auto& c : r.cpu_clocks)
    j["cpu_clocks"].push_back({{"cpu", c.cpu}, {"cur_khz", c.cur_khz}, {"base_khz", c.base_khz}, {"max_khz", c.max_khz},
                               {"policy_max_khz", c.policy_max_khz}});
  j["cpu_clock_source"] = r.cpu_clock_source;
  j["cpu_clock_under_load"] = r.cpu_clock_under_load;
  j["cpu_quota_source"] = r.cpu_quota_source;
  if (r.cpu_quota)
    j["cpu_quota"] = {{"cgroup", r.cpu_quota->cgroup}, {"bound_by", r.cpu_quota->bound_by},
                      {"limit_cpus", r.cpu_quota->limit_cpus}, {"allowed_cpus", r.cpu_quota->allowed_cpus}};
  for (const auto& g : r.gpus) {
    json links = json::array();
    for (const auto& l : g.nvlinks)
      links.push_back({{"link", l.link}, {"active", l.active}, {"replay", json_or_null(l.replay)}, {"recovery", json_or_null(l.recovery)}, {"crc_flit", json_or_null(l.crc_flit)}});
    j["gpus"].push_back({{"index", g.index}, {"name", g.name}, {"api", g.api}, {"xgmi_error_status", json_or_null(g.xgmi_error_status)},
                         {"ecc_uncorrected_volatile", json_or_null(g.ecc_uncorrected_volatile)},
                         {"ecc_corrected_volatile", json_or_null(g.ecc_corrected_volatile)}, {"remap_pending", json_or_null(g.remap_pending)},
                         {"remap_failure", json_or_null(g.remap_failure)}, {"retired_pages_pending", json_or_null(g.retired_pages_pending)},
                         {"pcie_gen", json_or_null(g.pcie_gen)}, {"pcie_gen_max", json_or_null(g.pcie_gen_max)}, {"pcie_width", json_or_null(g.pcie_width)},
                         {"pcie_width_max", json_or_null(g.pcie_width_max)}, {"clock_event_reasons", json_or_null(g.clock_event_reasons)},
                         {"temperature_c", json_or_null(g.temperature_c)}, {"slowdown_temperature_c", json_or_null(g.slowdown_temperature_c)},
                         {"nvlinks", links}});
  }
  // The kernel log's Xids: only when it was read (no Xid is then a pass).
  j["xid_source"] = r.xid_source;
  if (r.xid_read) {
    j["xids"] = json::array();
    for (const auto& e : r.xids)
      j["xids"].push_back({{"pci", e.pci}, {"xid", e.xid}, {"seconds_since_boot", e.seconds_since_boot}, {"text", e.text}});
  }
  return j;
}

HealthReadings readings_from_json(const json& j, const std::string& path) {
  if (!j.is_object()) bad_readings(path, "the readings must be an object (the \"readings\" of gpucal check --health --json)");
  HealthReadings r;
  const json& pcie = readings_array(j, "pcie", path);
  for (std::size_t i = 0; i < pcie.size(); ++i) {
    const std::string w = "readings.pcie[" + std::to_string(i) + "]";
    r.pcie.push_back({readings_string(pcie[i], "device", path, w), readings_string(pcie[i], "speed", path, w),
                      readings_string(pcie[i], "max_speed", path, w), required_number<int>(pcie[i], "width", path, w),
                      required_number<int>(pcie[i], "max_width", path, w)});
  }
  const json& edac = readings_array(j, "edac", path);
  for (std::size_t i = 0; i < edac.size(); ++i) {
    const std::string w = "readings.edac[" + std::to_string(i) + "]";
    r.edac.push_back({readings_string(edac[i], "controller", path, w), required_number<long long>(edac[i], "corrected", path, w),
                      required_number<long long>(edac[i], "uncorrected", path, w)});
  }
  const json& cpus = readings_array(j, "cpu_throttle", path);
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    const std::string w = "readings.cpu_throttle[" + std::to_string(i) + "]";
    r.cpu_throttle.push_back({required_number<int>(cpus[i], "cpu", path, w), required_number<long long>(cpus[i], "core_count", path, w),
                              required_number<long long>(cpus[i], "package_count", path, w)});
  }
  // Readings recorded before the clock check have no "cpu_clocks".
  if (j.contains("cpu_clocks")) {
    const json& clocks = readings_array(j, "cpu_clocks", path);
    for (std::size_t i = 0; i < clocks.size(); ++i) {
      const std::string w = "readings.cpu_clocks[" + std::to_string(i) + "]";
      auto khz = [&](const char* key) { return required_number<long long>(clocks[i], key, path, w); };
      r.cpu_clocks.push_back({required_number<int>(clocks[i], "cpu", path, w), khz("cur_khz"), khz("base_khz"), khz("max_khz"),
                              khz("policy_max_khz")});
    }
    if (j.contains("cpu_clock_under_load") && !j["cpu_clock_under_load"].is_boolean())
      bad_readings(path, "readings.cpu_clock_under_load must be true or false");
    r.cpu_clock_under_load = j.value("cpu_clock_under_load", false);
  }
  // Readings recorded before the quota check, or where the cgroup could not be read, have none.
  if (j.contains("cpu_quota") && !j["cpu_quota"].is_null()) {
    const json& q = j["cpu_quota"];
    if (!q.is_object()) bad_readings(path, "readings.cpu_quota must be an object");
    r.cpu_quota = CpuQuotaReading{readings_string(q, "cgroup", path, "readings.cpu_quota"),
                                  readings_string(q, "bound_by", path, "readings.cpu_quota"),
                                  required_number<double>(q, "limit_cpus", path, "readings.cpu_quota"),
                                  required_number<int>(q, "allowed_cpus", path, "readings.cpu_quota")};
  }
  const json& gpus = readings_array(j, "gpus", path);
  for (std::size_t i = 0; i < gpus.size(); ++i) r.gpus.push_back(gpu_from(gpus[i], path, "readings.gpus[" + std::to_string(i) + "]"));
  for (const char* key : {"pcie_source", "edac_source", "cpu_throttle_source", "cpu_clock_source", "cpu_quota_source", "gpu_source"})
    if (j.contains(key) && !j[key].is_string()) bad_readings(path, std::string("readings.") + key + " must be a string");
  r.pcie_source = j.value("pcie_source", "recorded in " + path);
  r.edac_source = j.value("edac_source", "recorded in " + path);
  r.cpu_throttle_source = j.value("cpu_throttle_source", "recorded in " + path);
  r.gpu_source = j.value("gpu_source", "recorded in " + path);
  r.cpu_quota_source = j.value("cpu_quota_source", r.cpu_quota ? "recorded in " + path : "no CPU quota recorded in " + path);
  r.cpu_clock_source = j.value("cpu_clock_source", r.cpu_clocks.empty() ? "no CPU clocks recorded in " + path : "recorded in " + path);
  // Readings recorded before the Xid check, or where the kernel log was not read, have no "xids".
  if (j.contains("xid_source") && !j["xid_source"].is_string()) bad_readings(path, "readings.xid_source must be a string");
  r.xid_source = j.value("xid_source", "no Xids recorded in " + path);
  if (j.contains("xids")) {
    const json& xids = readings_array(j, "xids", path);
    r.xid_read = true;
    for (std::size_t i = 0; i < xids.size(); ++i) {
      const std::string w = "readings.xids[" + std::to_string(i) + "]";
      XidEvent e;
      e.pci = readings_string(xids[i], "pci", path, w);
      e.xid = required_number<int>(xids[i], "xid", path, w);
      if (xids[i].contains("seconds_since_boot")) e.seconds_since_boot = required_number<double>(xids[i], "seconds_since_boot", path, w);
      if (xids[i].contains("text")) e.text = readings_string(xids[i], "text", path, w);
      r.xids.push_back(e);
    }
  }
  return r;
}

}  // namespace gpucal::check
