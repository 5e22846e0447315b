#include "harness/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpucal {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of an empty sample");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  s.count = static_cast<int>(samples.size());
  s.median = percentile_sorted(samples, 0.5);
  s.p10 = percentile_sorted(samples, 0.1);
  s.p90 = percentile_sorted(samples, 0.9);
  s.min = samples.front();
  s.max = samples.back();
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  double ss = 0;
  for (double x : samples) ss += (x - s.mean) * (x - s.mean);
  s.stdev = samples.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  const double sigma = (percentile_sorted(samples, 0.75) - percentile_sorted(samples, 0.25)) / 1.349;
  s.median_rel_se = (s.median > 0 && samples.size() > 1) ? 1.2533 * sigma / std::sqrt(n) / s.median : 0.0;
  return s;
}

}  // namespace gpucal
