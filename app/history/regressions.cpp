#include "app/history/regressions.h"

#include <cmath>

#include "app/history/robust_stats.h"

namespace gpucal::history {

namespace {

Trend trend_of(const SeriesKey& key, const std::vector<SeriesPoint>& points, const RegressionOptions& o) {
  Trend t;
  t.metric = key.first;
  t.node = key.second;
  const fleet::MetricKind kind = fleet::metric_kind(t.metric);
  t.better = kind.better;
  const SeriesPoint& last = points.back();
  t.unit = last.unit;
  t.latest = last.value;
  t.latest_time = last.time;
  t.latest_status = last.status;
  std::vector<double> previous;
  for (std::size_t i = points.size() - 1; i-- > 0 && static_cast<int>(previous.size()) < o.window;)
    if (points[i].value && points[i].status == "ok") previous.push_back(*points[i].value);
  t.history = static_cast<int>(previous.size());
  if (!t.latest) {
    t.note = "latest run has no figure (" + last.status + ")";
    return t;
  }
  if (t.history < o.min_history) {
    t.note = "history too short (" + std::to_string(t.history) + " previous ok run(s), " + std::to_string(o.min_history) + " needed)";
    return t;
  }
  const fleet::RobustReference r = *fleet::robust_reference(previous);
  t.baseline = r.median;
  if (r.median == 0) {
    t.note = "baseline is 0";
    return t;
  }
  t.spread = r.sigma / std::fabs(r.median);
  t.threshold = std::max(o.min_change, o.k * t.spread);
  t.change = (*t.latest - r.median) / std::fabs(r.median);
  const double worse = kind.better == fleet::Better::higher ? -t.change : t.change;
  t.regression = worse > t.threshold;
  return t;
}

}  // namespace

std::vector<Trend> analyse(const std::map<SeriesKey, std::vector<SeriesPoint>>& series, const RegressionOptions& o) {
  std::vector<Trend> out;
  for (const auto& [key, points] : series) {
    if (points.empty() || key.first == "node_status" || !fleet::metric_kind(key.first).known) continue;
    out.push_back(trend_of(key, points, o));
  }
  return out;
}

}  // namespace gpucal::history
