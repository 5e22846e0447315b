#include "app/common/process_spread.h"

#include <algorithm>

#include "app/common/median.h"

namespace gpucal::calibration {

ProcessSpread process_spread(const CsvTable& t, const std::vector<std::size_t>& rows) {
  std::map<std::string, std::vector<std::size_t>> by_process;
  const bool has_process = t.has_column("process_run");
  for (std::size_t r : rows) by_process[has_process ? t.get_string(r, "process_run") : "0"].push_back(r);
  ProcessSpread s;
  std::vector<double> widths;
  for (const auto& [process, own] : by_process) {
    std::vector<double> medians, width;
    for (std::size_t r : own) {
      const double median = t.get_double(r, "time_us_median");
      medians.push_back(median);
      width.push_back((t.get_double(r, "time_us_p90") - t.get_double(r, "time_us_p10")) / median);
    }
    s.medians_us.push_back(median_of(medians));
    widths.push_back(median_of(width));
  }
  if (s.medians_us.empty()) return s;
  std::sort(s.medians_us.begin(), s.medians_us.end());
  s.median_us = median_of(s.medians_us);
  s.between_rel = (s.medians_us.back() - s.medians_us.front()) / s.median_us;
  s.within_rel = median_of(widths);
  return s;
}

std::map<std::string, ProcessSpread> process_spreads(const CsvTable& t) {
  std::map<std::string, std::vector<std::size_t>> ok_rows;
  for (std::size_t r = 0; r < t.row_count(); ++r)
    if (t.get_string(r, "status") == "ok") ok_rows[t.get_string(r, "point")].push_back(r);
  std::map<std::string, ProcessSpread> spreads;
  for (const auto& [point, rows] : ok_rows)
    if (ProcessSpread s = process_spread(t, rows); s.processes() >= 2) spreads.emplace(point, std::move(s));
  return spreads;
}

}  // namespace gpucal::calibration
