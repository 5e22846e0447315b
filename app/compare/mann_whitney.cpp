#include "app/compare/mann_whitney.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace gpucal::calibration {

MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("mann_whitney_u: empty sample");
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size()), n = n1 + n2;
  std::vector<std::pair<double, int>> pooled;  // (value, which sample)
  for (double x : a) pooled.emplace_back(x, 0);
  for (double x : b) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double mid_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1..j averaged
    const double ties = static_cast<double>(j - i);
    tie_term += ties * ties * ties - ties;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second == 0) rank_sum_a += mid_rank;
    i = j;
  }
  MannWhitneyResult result;
  result.u_statistic = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mu = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (!(variance > 0)) return result;  // every value equal: no evidence of a difference
  result.z = std::max(0.0, std::abs(result.u_statistic - mu) - 0.5) / std::sqrt(variance);
  result.p_value = std::min(1.0, std::erfc(result.z / std::sqrt(2.0)));
  return result;
}

}  // namespace gpucal::calibration
