// gpucal run --repeat-process N: each bench runs N times as separate processes, one after
// the other (process_runs/<bench>.<k>.csv and its logs), and the runs are merged into the
// folder's <bench>.csv as if one run had measured every point N times: `process_run` = k, and
// `repetition` numbered across the processes so (point, repetition) stays unique; the samples
// files alike, and run 0's sidecar with a `process_runs` record. Beside it,
// <bench>.process_runs.csv gives each point's median of the processes' medians, their range
// and the spread between processes next to the spread within one (app/common/process_spread.h).
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "app/common/child_process.h"

namespace gpucal::calibration {

// Runs `command_writing(csv)` N times (N = `processes`), each writing its own CSV under
// <out_dir>/process_runs/, all logging to `log_path`; stops at the first failure or
// signal (that run's result is returned; nothing is merged). After N good runs, merges them
// into <out_dir>/<bench>.csv and writes <out_dir>/<bench>.process_runs.csv.
ChildResult run_bench_processes(const std::function<std::string(const std::string& csv)>& command_writing,
                                const std::string& out_dir, const std::string& bench,
                                const std::string& log_path, int processes, std::ostream& log);

// The merge alone (exposed for tests): `run_csvs` in process order into `out_csv` (+ .samples.csv,
// .json when run 0 has them) and `out_csv`'s .process_runs.csv. Throws std::runtime_error when
// the runs' column sets differ.
void merge_process_runs(const std::vector<std::string>& run_csvs, const std::string& out_csv);

}  // namespace gpucal::calibration
