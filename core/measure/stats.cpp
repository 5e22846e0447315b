#include "core/measure/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpucal {

namespace {
// The stopping rule's statistic from the median and the quartiles (one formula for the
// sorted and the selection paths).
double rel_se(double median, double q25, double q75, size_t n) {
  const double sigma = (q75 - q25) / 1.349;
  return (median > 0 && n > 1) ? 1.2533 * sigma / std::sqrt(static_cast<double>(n)) / median : 0.0;
}
}  // namespace

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of an empty sample");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[hi] - sorted[lo]);
}

double percentile_select(std::vector<double>& v, double q) {
  if (v.empty()) throw std::invalid_argument("percentile of an empty sample");
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const auto lo_it = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin(), lo_it, v.end());
  const double a = *lo_it;
  if (lo + 1 >= v.size()) return a;
  const double b = *std::min_element(lo_it + 1, v.end());  // the next order statistic
  return a + (pos - static_cast<double>(lo)) * (b - a);
}

double median_rel_se(std::vector<double> samples) {
  if (samples.size() < 2) return 0.0;
  const double median = percentile_select(samples, 0.5);
  const double q25 = percentile_select(samples, 0.25);
  const double q75 = percentile_select(samples, 0.75);
  return rel_se(median, q25, q75, samples.size());
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
  s.median_rel_se =
      rel_se(s.median, percentile_sorted(samples, 0.25), percentile_sorted(samples, 0.75), samples.size());
  return s;
}

}  // namespace gpucal
