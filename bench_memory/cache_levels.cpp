#include "bench_memory/cache_levels.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpucal::memory {

namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

int64_t parse_sysfs_size(const std::string& text) {
  if (text.empty()) return 0;
  int64_t v = std::strtoll(text.c_str(), nullptr, 10);
  const char unit = text.back();
  return v << (unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0);
}

std::vector<CacheLevel> host_levels(const DeviceInfo& device) {
  std::vector<CacheLevel> levels;
  const int cpus = std::max(1, device.compute_units);
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int i = 0; i < 8; ++i) {
    const std::string dir = base + std::to_string(i) + "/";
    const std::string type = read_line(dir + "type");
    if (type.empty()) continue;
    if (type == "Instruction") continue;
    const int level = std::atoi(read_line(dir + "level").c_str());
    const int64_t size = parse_sysfs_size(read_line(dir + "size"));
    const int sharing = std::max(1, count_cpu_list(read_line(dir + "shared_cpu_list")));
    if (level <= 0 || size <= 0) continue;
    CacheLevel c;
    c.name = "L" + std::to_string(level) + (type == "Data" ? "d" : "");
    c.per_unit_bytes = size;
    c.instances = std::max(1, cpus / sharing);
    c.bytes = size * c.instances;
    c.source = "sysfs cpu0/cache/index" + std::to_string(i) + " (shared by " + std::to_string(sharing) + " CPUs)";
    levels.push_back(c);
  }
  if (!levels.empty()) return levels;
  // No sysfs cache facts (seen under hypervisors): sysconf for the private levels, the
  // harness's last-level figure for L3 (sysconf's L3 is unreliable there).
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l1 > 0) levels.push_back({"L1d", l1 * cpus, l1, cpus, "sysconf _SC_LEVEL1_DCACHE_SIZE (private per core assumed)"});
  if (l2 > 0) levels.push_back({"L2", l2 * cpus, l2, cpus, "sysconf _SC_LEVEL2_CACHE_SIZE (private per core assumed)"});
  if (device.l2_bytes > 0)
    levels.push_back({"L3", static_cast<int64_t>(device.l2_bytes), static_cast<int64_t>(device.l2_bytes), 1,
                      "harness last-level figure (no sysfs cache facts: 32 MiB default)"});
  return levels;
}

}  // namespace

int count_cpu_list(const std::string& text) {
  int count = 0;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) return 0;
    const auto dash = item.find('-');
    char* end = nullptr;
    const long lo = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str()) return 0;
    long hi = lo;
    if (dash != std::string::npos) {
      hi = std::strtol(item.c_str() + dash + 1, &end, 10);
      if (*end != '\0' || hi < lo) return 0;
    } else if (*end != '\0') {
      return 0;
    }
    count += static_cast<int>(hi - lo + 1);
  }
  return count;
}

std::vector<CacheLevel> cache_levels(const DeviceInfo& device) {
  if (const char* pretend = std::getenv("GPUCAL_TEST_LLC_BYTES")) {
    // Test only: a last-level cache of this size (K/M suffix), so that a short sweep reaches
    // beyond it.
    std::string text = pretend;
    const int64_t bytes = parse_sysfs_size(text);
    if (bytes > 0) return {{"L3", bytes, bytes, 1, "GPUCAL_TEST_LLC_BYTES (test override)"}};
  }
  if (device.backend == "host") return host_levels(device);
  std::vector<CacheLevel> levels;
  if (device.l2_bytes > 0) {
    // CDNA 3 reports one XCD's L2 (docs/field-reference.md); a kernel spread over the device uses all of
    // them: 8 XCDs on MI300X/MI325X, 6 on MI300A.
    const bool mi300 = device.name.find("MI300") != std::string::npos || device.arch.rfind("gfx94", 0) == 0;
    const int xcds = !mi300 ? 1 : device.name.find("MI300A") != std::string::npos ? 6 : 8;
    const auto l2 = static_cast<int64_t>(device.l2_bytes);
    levels.push_back({"L2", l2 * xcds, l2, xcds,
                      mi300 ? "runtime l2CacheSize, per XCD, x " + std::to_string(xcds) + " XCDs" : "runtime l2CacheSize"});
    if (mi300)
      levels.push_back({"MALL", int64_t{256} << 20, int64_t{256} << 20, 1,
                        "AMD CDNA 3 white paper: 256 MB Infinity Cache (not reported by the runtime)"});
  }
  return levels;
}

int64_t last_level_bytes(const std::vector<CacheLevel>& levels) {
  int64_t best = 0;
  for (const auto& c : levels) best = std::max(best, c.bytes);
  return best;
}

std::string placement(const std::vector<CacheLevel>& levels, int64_t working_set) {
  std::vector<CacheLevel> sorted = levels;
  std::sort(sorted.begin(), sorted.end(), [](const CacheLevel& a, const CacheLevel& b) { return a.bytes < b.bytes; });
  for (const auto& c : sorted)
    if (working_set <= c.bytes) return c.name;
  return "memory";
}

nlohmann::json cache_levels_json(const std::vector<CacheLevel>& levels) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : levels)
    j.push_back({{"name", c.name}, {"bytes", c.bytes}, {"per_unit_bytes", c.per_unit_bytes},
                 {"instances", c.instances}, {"source", c.source}});
  return j;
}

}  // namespace gpucal::memory
