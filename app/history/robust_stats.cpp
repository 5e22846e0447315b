#include "app/history/robust_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpucal::fleet {

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<long>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<long>(mid));
  return (lower + upper) / 2;
}

std::optional<double> median_absolute_deviation(const std::vector<double>& values) {
  const auto center = median(values);
  if (!center) return std::nullopt;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - *center));
  return median(deviations);
}

std::optional<RobustReference> robust_reference(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  RobustReference r;
  r.median = *median(values);
  r.mad = *median_absolute_deviation(values);
  r.sigma = kMadToSigma * r.mad;
  r.count = static_cast<int>(values.size());
  return r;
}

double robust_z(double x, const RobustReference& reference) {
  const double delta = x - reference.median;
  if (reference.sigma > 0) return delta / reference.sigma;
  if (delta == 0) return 0;
  return delta > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

double multiple_test_z(double expected_false, std::size_t tests, bool two_sided, double floor) {
  // Both tails: erfc(z / sqrt 2); one: half of it. erfc falls with z.
  const double tail = (two_sided ? 1 : 2) * expected_false / static_cast<double>(std::max<std::size_t>(tests, 1));
  double lo = floor, hi = std::max(floor, 12.0);
  if (std::erfc(lo / std::sqrt(2.0)) <= tail) return lo;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erfc(mid / std::sqrt(2.0)) > tail ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace gpucal::fleet
