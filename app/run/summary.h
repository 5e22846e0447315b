// summary.md of a `gpucal run`: the verdict first (verdict.h), then the tables behind it: fits
// against log-log interpolation, figures against the device's peak, the stand-ins, the benches,
// the calibration, each export's notes, the predicted step and the plots. A stopped run writes
// the title (marked) and the bench table only.
#pragma once
#include <string>

#include "app/run/run_record.h"

namespace gpucal::calibration {

std::string summary_markdown(const RunRecord& record);

}  // namespace gpucal::calibration
