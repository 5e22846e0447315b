#include "app/compare/process_compare.h"

#include <algorithm>
#include <cstdio>

#include "app/common/process_spread.h"

namespace gpucal::calibration {

bool compare_by_processes(const CsvTable& baseline, const std::vector<std::size_t>& baseline_rows,
                          const CsvTable& current, const std::vector<std::size_t>& current_rows,
                          const CompareOptions& options, PointComparison& c) {
  const ProcessSpread b = process_spread(baseline, baseline_rows);
  const ProcessSpread k = process_spread(current, current_rows);
  if (b.processes() < 2 && k.processes() < 2) return false;
  c.test = "process-medians";
  c.baseline_median_us = b.median_us;
  c.current_median_us = k.median_us;
  c.ratio = k.median_us / b.median_us;
  const bool slower = k.medians_us.front() > b.medians_us.back();
  const bool faster = k.medians_us.back() < b.medians_us.front();
  c.significant = slower || faster;
  const double spread = std::max(b.between_rel, k.between_rel);
  const double needed = std::max(options.threshold, spread);
  if (slower && *c.ratio - 1 > needed) {
    c.verdict = Verdict::regression;
    c.is_failure = true;
  } else if (faster && 1 - *c.ratio > needed) {
    c.verdict = Verdict::improvement;
  } else {
    c.verdict = Verdict::unchanged;
  }
  char detail[160];
  std::snprintf(detail, sizeof detail,
                "%d vs %d processes; spread between processes %.1f%% (a change must exceed %.1f%%)",
                b.processes(), k.processes(), 100 * spread, 100 * needed);
  c.detail = detail;
  return true;
}

}  // namespace gpucal::calibration
