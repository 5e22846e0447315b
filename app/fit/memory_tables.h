// calibration.json's "memory" section: what the memory-bound part of a step costs.
//   d2d_copy   bench_p2p's device-to-device copies (best GB/s, MB_efficiency by copy size)
//   stream     bench_memory's STREAM curves (bandwidth against working set per kernel, dtype
//              and implementation) with the flat stretches found on each curve and the cache
//              level each belongs to (the sidecar's cache_levels), and one table of
//              plateaus per level
//   device_bandwidth_gbps   the memory (beyond the last cache) plateau of copy: what an op that
//              streams bytes through device memory can expect; fp32 preferred
//   vector     fma_chain: best TFLOP/s per dtype against the vector peak
//   ops        per kernel and dtype: bandwidth by bytes moved and an efficiency step table
//              (bandwidth / device_bandwidth_gbps) keyed by MB moved, Calculon-style
// Documented in results/SCHEMA.md. Every number comes from ok rows; what cannot be computed
// is named in `missing`.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/common/results_dir.h"

namespace gpucal::calibration {

// A flat stretch of a bandwidth curve: consecutive points (by working set) whose bandwidths
// stay within `tolerance` (relative) of the stretch's median; at least two points.
struct Plateau {
  double working_set_min = 0, working_set_max = 0;
  double bandwidth_gbps = 0;  // median of the stretch
  int points = 0;
  std::string level;  // the cache level most of its points fit in ("memory" beyond the last)
  double level_bytes = 0;  // that level's capacity (0 for memory)
};

struct CacheLevelFact {
  std::string name;
  double bytes = 0;
};

// Points (working set bytes, GB/s) in any order. Each point is placed in the first level whose
// capacity holds its working set, else "memory"; a stretch takes its points' majority level.
std::vector<Plateau> detect_plateaus(std::vector<std::pair<double, double>> points,
                                     const std::vector<CacheLevelFact>& levels, double tolerance = 0.15);

nlohmann::json memory_section(const BenchResults* p2p, const BenchResults* memory, std::vector<std::string>& missing);

}  // namespace gpucal::calibration
