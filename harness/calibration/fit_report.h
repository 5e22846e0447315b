// `gpucal fit --report`: one line per communication group of a calibration.json with the chosen
// form, its cross-validated errors, the log-log interpolation baseline on the same held-out
// sizes and every form's held-out error, so a user sees how well each form predicts sizes it
// was not fitted to.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gpucal::calibration {

// A header line and one line per group; "-" where an error was not computed.
std::string format_fit_report(const nlohmann::json& calibration);

}  // namespace gpucal::calibration
