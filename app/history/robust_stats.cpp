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

std::optional<RobustReference> tied_robust_reference(const std::vector<double>& values) {
  auto r = robust_reference(values);
  if (!r || r->sigma > 0) return r;
  double sum = 0;
  for (double v : values) sum += std::fabs(v - r->median);
  r->sigma = kMeanAbsToSigma * sum / static_cast<double>(values.size());
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

std::map<std::string, double> typical_pair_of_nodes(
    const std::vector<std::tuple<std::string, std::string, double>>& pairs) {
  // Nodes by index, each with the pairs it is in: a sweep costs two visits per pair (4,096 nodes
  // and 6,144 pairs in milliseconds), not a pass over every pair for every node.
  std::map<std::string, std::size_t> index;
  struct Pair {
    std::size_t a, b;
    double log_value;
  };
  std::vector<Pair> kept;
  for (const auto& [a, b, v] : pairs) {
    if (!(v > 0)) continue;
    const std::size_t ia = index.try_emplace(a, index.size()).first->second;
    const std::size_t ib = index.try_emplace(b, index.size()).first->second;
    kept.push_back({ia, ib, std::log(v)});
  }
  std::vector<std::vector<std::size_t>> pairs_of(index.size());
  std::vector<double> logs, effect(index.size(), 0.0), step(index.size(), 0.0);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    pairs_of[kept[i].a].push_back(i);
    pairs_of[kept[i].b].push_back(i);
    logs.push_back(kept[i].log_value);
  }
  double overall = median(logs).value_or(0);
  // Sweeps until no effect moves by more than 1e-12 of a log unit. Every node's step is taken
  // from the same effects (Jacobi), so nodes whose pairs are alike stay exactly alike.
  std::vector<double> residuals;
  for (int sweep = 0; sweep < 100 && !effect.empty(); ++sweep) {
    for (std::size_t n = 0; n < effect.size(); ++n) {
      residuals.clear();
      for (const std::size_t i : pairs_of[n])
        residuals.push_back(kept[i].log_value - overall - effect[kept[i].a] - effect[kept[i].b]);
      step[n] = median(residuals).value_or(0);
    }
    double moved = 0;
    for (std::size_t n = 0; n < effect.size(); ++n) {
      effect[n] += step[n] / 2;  // half a step: each pair's residual is shared by its two ends
      moved = std::max(moved, std::fabs(step[n]));
    }
    const double shift = median(effect).value_or(0);  // the typical node's effect is 0
    for (double& e : effect) e -= shift;
    overall += 2 * shift;
    if (moved < 1e-12) break;
  }
  std::map<std::string, double> typical;
  // To 12 significant digits: what the sweeps leave of a difference is not one (a MAD of 1e-16
  // would give the odd node an infinite z).
  for (const auto& [node, i] : index) {
    const double v = std::exp(overall + effect[i]);
    const double scale = std::pow(10.0, 11 - std::floor(std::log10(v)));
    typical[node] = std::round(v * scale) / scale;
  }
  return typical;
}

}  // namespace gpucal::fleet
