// gpucal compare on points measured by several processes (gpucal run --repeat-process): the
// process is the unit of replication (app/common/process_spread.h), so the point's figure is
// the median of the processes' medians, and a change counts only when it exceeds the spread
// between processes: every process of one run slower (or faster) than every process of the
// other, and the medians apart by more than both the threshold and the wider run's
// between-process spread ((max - min) / median of its processes' medians).
#pragma once

#include <cstddef>
#include <vector>

#include "app/common/csv_table.h"
#include "app/compare/compare.h"

namespace gpucal::calibration {

// Fills `c` (medians, ratio, test "process-medians", verdict) and returns true when either run
// measured the point in at least two processes; returns false and leaves `c` alone otherwise.
bool compare_by_processes(const CsvTable& baseline, const std::vector<std::size_t>& baseline_rows,
                          const CsvTable& current, const std::vector<std::size_t>& current_rows,
                          const CompareOptions& options, PointComparison& c);

}  // namespace gpucal::calibration
