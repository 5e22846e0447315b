// One launch is not a sample: a point measured by several processes (gpucal run
// --repeat-process N, the rows' `process_run` column) has a spread between processes beside
// the spread within each. A process can land in a fast or a slow state for its whole run
// (page placement, which cores its threads got, a competitor), so the unit of replication for
// a regression is the process: its median. Used by gpucal run (the process_runs table) and
// gpucal compare (a change must exceed the spread between processes).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "app/common/csv_table.h"

namespace gpucal::calibration {

struct ProcessSpread {
  std::vector<double> medians_us;  // each process's median time, ascending
  double median_us = 0;            // the median of the processes' medians
  double between_rel = 0;          // (max - min) of the processes' medians / median_us
  double within_rel = 0;           // the median over processes of (p90 - p10) / median within each
  int processes() const { return static_cast<int>(medians_us.size()); }
};

// The spread of `rows` (one point's, all ok) of `t` over their process_run cells; each process's
// median is the median of its rows' time_us_median (its in-process repetitions). A table without
// the column is one process.
ProcessSpread process_spread(const CsvTable& t, const std::vector<std::size_t>& rows);

// Every point of `t` whose ok rows came from at least two processes, by point.
std::map<std::string, ProcessSpread> process_spreads(const CsvTable& t);

}  // namespace gpucal::calibration
