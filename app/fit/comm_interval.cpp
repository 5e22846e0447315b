#include "app/fit/comm_interval.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace gpucal::calibration {

using nlohmann::json;

ConformalQuantile conformal_quantile(std::vector<double> scores, double level) {
  if (scores.empty()) throw std::invalid_argument("conformal_quantile: no scores");
  if (!(level > 0 && level < 1)) throw std::invalid_argument("conformal_quantile: level must be in (0, 1)");
  std::sort(scores.begin(), scores.end());
  ConformalQuantile q;
  q.n = static_cast<int>(scores.size());
  // ceil((n + 1) level), guarded against (n + 1) level landing a rounding error above an integer.
  q.rank = static_cast<int>(std::ceil((q.n + 1) * level - 1e-9));
  q.capped = q.rank > q.n;
  q.value = scores[static_cast<std::size_t>(std::min(q.rank, q.n) - 1)];
  return q;
}

double reference_gap_log2(const std::vector<double>& knots_log2) {
  std::vector<double> spans;
  const std::size_t n = knots_log2.size();
  if (n >= 3)
    for (std::size_t i = 1; i + 1 < n; ++i) spans.push_back(knots_log2[i + 1] - knots_log2[i - 1]);
  else if (n == 2)
    spans.push_back(knots_log2[1] - knots_log2[0]);
  if (spans.empty()) return 1;
  std::sort(spans.begin(), spans.end());
  const std::size_t m = spans.size();
  const double median = m % 2 ? spans[m / 2] : 0.5 * (spans[m / 2 - 1] + spans[m / 2]);
  return median > 0 ? median : 1;
}

double width_multiplier(const IntervalShape& shape, double x, int excluded) {
  std::vector<double> k;
  for (std::size_t i = 0; i < shape.knots_log2.size(); ++i)
    if (static_cast<int>(i) != excluded) k.push_back(shape.knots_log2[i]);
  if (k.empty()) return 1;
  constexpr double kSame = 1e-9;  // log2 units: the same size
  for (double v : k)
    if (std::abs(v - x) < kSame) return 0;
  const double g = shape.reference_gap_log2 > 0 ? shape.reference_gap_log2 : 1;
  if (x < k.front()) return 1 + (k.front() - x) / g;
  if (x > k.back()) return 1 + (x - k.back()) / g;
  const auto above = std::upper_bound(k.begin(), k.end(), x);
  const double a = *(above - 1), b = *above;
  double w = std::pow(std::max(kMinSpacingMultiplier, (b - a) / g), kSpacingPower);
  for (const auto& [from, to] : shape.switches_log2)
    if (from < b - kSame && to > a + kSame) {
      w *= kBoundaryFactor;
      break;
    }
  return w;
}

namespace {

const char* const kMethod =
    "split-conformal on the form's leave-one-out residuals |ln(predicted/measured)|, each divided by the width "
    "multiplier w of its size with that size left out; quantile_log = the ceil((n+1) level)-th smallest score; "
    "interval = prediction x exp(-/+ quantile_log x w(S)); w = (spacing of the measured neighbours / "
    "reference_gap_log2, at least 0.5), x boundary_factor where a regime switch of the regime form lies between "
    "them, 1 + log2 distance / reference_gap_log2 beyond the measured sizes, 0 at a measured size";

// The regime form's switches as [from, to] log2 sizes (its gaps, in bus bytes).
std::vector<std::pair<double, double>> regime_switches(const json& regime, double bus_factor) {
  std::vector<std::pair<double, double>> out;
  if (!regime.is_object() || regime.contains("error") || !regime.contains("gaps")) return out;
  for (const json& gap : regime["gaps"])
    out.push_back({std::log2(gap["from_bus_bytes"].get<double>() / bus_factor),
                   std::log2(gap["to_bus_bytes"].get<double>() / bus_factor)});
  return out;
}

IntervalShape shape_of(const json& interval) {
  IntervalShape s;
  for (const json& k : interval["knots_size_bytes"]) s.knots_log2.push_back(std::log2(k.get<double>()));
  s.reference_gap_log2 = interval["reference_gap_log2"];
  for (const json& sw : interval["switches_size_bytes"])
    s.switches_log2.push_back({std::log2(sw[0].get<double>()), std::log2(sw[1].get<double>())});
  return s;
}

json not_computed(const std::string& form, const std::string& reason) {
  return {{"computed", false}, {"form", form}, {"level", kIntervalLevel}, {"reason", reason}};
}

}  // namespace

json fit_interval(const std::string& form, const HeldOutError& loo, const std::vector<double>& sizes_bytes,
                  const json& regime, double bus_factor) {
  if (!loo.computed || loo.log_ratio.empty())
    return not_computed(form, "no leave-one-out residuals of " + form +
                                  (loo.reason_not_computed.empty() ? "" : ": " + loo.reason_not_computed));
  IntervalShape shape;
  const std::set<double> distinct(sizes_bytes.begin(), sizes_bytes.end());
  for (double s : distinct) shape.knots_log2.push_back(std::log2(s));
  shape.reference_gap_log2 = reference_gap_log2(shape.knots_log2);
  shape.switches_log2 = regime_switches(regime, bus_factor);
  std::vector<double> scores;
  for (std::size_t j = 0; j < loo.log_ratio.size(); ++j) {
    const double x = std::log2(loo.point_sizes_bytes[j]);
    const auto at = std::lower_bound(shape.knots_log2.begin(), shape.knots_log2.end(), x - 1e-9);
    const double w = width_multiplier(shape, x, static_cast<int>(at - shape.knots_log2.begin()));
    scores.push_back(std::abs(loo.log_ratio[j]) / w);
  }
  const ConformalQuantile q = conformal_quantile(scores, kIntervalLevel);
  if (!std::isfinite(q.value)) return not_computed(form, "a leave-one-out prediction of " + form + " was not positive");
  int covered = 0;
  for (double s : scores) covered += s <= q.value;
  json switches = json::array();
  for (const auto& [from, to] : shape.switches_log2) switches.push_back({std::exp2(from), std::exp2(to)});
  return {{"computed", true},
          {"form", form},
          {"level", kIntervalLevel},
          {"method", kMethod},
          {"residuals", q.n},
          {"rank", q.rank},
          {"capped", q.capped},
          {"quantile_log", q.value},
          {"loo_coverage", static_cast<double>(covered) / q.n},
          {"reference_gap_log2", shape.reference_gap_log2},
          {"boundary_factor", kBoundaryFactor},
          {"knots_size_bytes", std::vector<double>(distinct.begin(), distinct.end())},
          {"switches_size_bytes", switches}};
}

IntervalAt interval_at(const json& interval, double size_bytes, double time_us) {
  IntervalAt out;
  if (!interval.is_object() || !interval.value("computed", false)) return out;
  out.multiplier = width_multiplier(shape_of(interval), std::log2(size_bytes));
  out.halfwidth_log = interval["quantile_log"].get<double>() * out.multiplier;
  out.lo_us = time_us * std::exp(-out.halfwidth_log);
  out.hi_us = time_us * std::exp(out.halfwidth_log);
  out.computed = true;
  return out;
}

}  // namespace gpucal::calibration
