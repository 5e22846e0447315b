// The steps of `gpucal run` after its benches: fit (calibration.json), exports (export/<tool>/,
// every consumer, with the run's stand-ins: stand_ins.h), the predicted step of the suite's
// model (predict.json, by `gpucal predict` on the folder) and plots (plots/). Each records what
// it did in the RunRecord and prints one line; their own output goes to logs/.
#pragma once
#include <ostream>
#include <string>

#include "app/run/run_record.h"
#include "app/run/run_suite.h"

namespace gpucal::calibration {

void fit_step(RunRecord& record, std::ostream& log);
void export_step(RunRecord& record, std::ostream& log);
void predict_step(RunRecord& record, const RunOptions& options, std::ostream& log);
void plots_step(RunRecord& record, const RunOptions& options, std::ostream& log);

// A Python interpreter with matplotlib (/usr/bin/python3 first, then python3 on PATH), or
// empty; `why_not` then says what was tried.
std::string find_python_with_matplotlib(std::string& why_not);
// plots/ folder: $GPUCAL_PLOTS_DIR, beside the binary, or the source tree's.
std::string find_plots_dir(const std::string& gpucal_path);

}  // namespace gpucal::calibration
