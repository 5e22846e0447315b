#include <algorithm>
#include <cmath>

#include "app/history/diagnosis.h"

namespace gpucal::fleet {

MetricTable rank_metric(const std::string& metric, Better better, const std::map<std::string, double>& values,
                        const std::optional<RobustReference>& reference, const DiagnosisOptions& o) {
  MetricTable t;
  t.metric = metric;
  t.better = better;
  t.unit = metric_kind(metric).unit;
  t.gross_factor = o.gross_factor;
  std::vector<double> all;
  for (const auto& [subject, v] : values) all.push_back(v);
  t.reference = reference ? reference : tied_robust_reference(all);
  const bool ranked = t.reference && static_cast<int>(all.size()) >= o.min_count && t.reference->count >= o.min_count;
  for (const auto& [subject, v] : values) {
    Ranked r{subject, v};
    if (t.reference) {
      r.z = robust_z(v, *t.reference);
      r.deviation = t.reference->median != 0 ? (v - t.reference->median) / std::fabs(t.reference->median) : 0;
      // Worse by the factor 1 - min_deviation either way: 10% below a bandwidth's median, or
      // 1/0.9 = 1.11 times a latency's.
      const double m = t.reference->median;
      const bool far = better == Better::higher ? v <= m * (1 - o.min_deviation) : v * (1 - o.min_deviation) >= m;
      const double sign = better == Better::higher ? -1 : 1;  // +1: the bad direction is up
      r.gross = ranked && o.gross_factor > 1 && m > 0 &&
                (better == Better::higher ? v * o.gross_factor <= m : v >= m * o.gross_factor);
      r.outlier = (ranked && sign * r.z >= o.z_threshold && far) || r.gross;
    }
    r.suspect = r.outlier;
    t.rows.push_back(r);
  }
  std::sort(t.rows.begin(), t.rows.end(), [&](const Ranked& a, const Ranked& b) {
    return better == Better::higher ? a.value < b.value : a.value > b.value;
  });
  return t;
}

}  // namespace gpucal::fleet
