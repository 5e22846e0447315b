// The cache levels bench_memory marks on its bandwidth curves and uses to place a working
// set ("fits in L2", "beyond the last level"): capacities as the device facts give them,
// aggregated over the cores or SMs that a kernel's threads use together.
//   host: sysfs (/sys/devices/system/cpu/cpu0/cache: level, type, size, shared_cpu_list;
//         a private cache counts once per core), else sysconf for L1d and L2 (assumed
//         private), and the harness's last-level figure (DeviceInfo::l2_bytes) for L3;
//   GPUs: L2 from the runtime (DeviceInfo::l2_bytes), plus the Infinity Cache (MALL) of the
//         MI300 series, which the runtime does not report (AMD CDNA 3 white paper: 256 MB).
//         L1 per SM/CU is not reported by the runtimes and is not listed.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/backend/backend.h"

namespace gpucal::memory {

struct CacheLevel {
  std::string name;    // L1d, L2, L3, MALL
  int64_t bytes = 0;   // aggregate capacity over the units a kernel uses
  int64_t per_unit_bytes = 0;
  int instances = 1;   // copies of this cache among those units
  std::string source;
};

std::vector<CacheLevel> cache_levels(const DeviceInfo& device);
// The largest level's capacity (the last-level cache); 0 when none is known.
int64_t last_level_bytes(const std::vector<CacheLevel>& levels);
// The first level whose capacity holds `working_set` bytes, else "memory".
std::string placement(const std::vector<CacheLevel>& levels, int64_t working_set);
nlohmann::json cache_levels_json(const std::vector<CacheLevel>& levels);

// Parses a sysfs cpu list ("0-3,8,10-11") into a CPU count; 0 for an empty or bad list.
int count_cpu_list(const std::string& text);

}  // namespace gpucal::memory
