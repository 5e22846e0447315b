// The median of a sample, shared by the fits (app/fit/compute_tables.h, memory_tables.h) and the
// spread between processes (process_spread.h).
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace gpucal::calibration {

// Median of a non-empty sample (the mean of the two middle values for an even count).
inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace gpucal::calibration
