// The calibration.json document (app/common/calibration_json.h) that `gpucal fit` derives from a
// results folder: the compute, memory and communication fits, their sources and what is missing.
#pragma once
#include <nlohmann/json.hpp>

#include "app/common/results_dir.h"

namespace gpucal::calibration {

nlohmann::json build_calibration(const ResultsDir& results);

}  // namespace gpucal::calibration
