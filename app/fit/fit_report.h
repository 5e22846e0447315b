// `gpucal fit --report`: one line per communication group of a calibration.json with the chosen
// form and its leave-one-out error, the held-out error of the choice (`heldout%`: the form
// picked on the training sizes alone, `pick`, on the held-out sizes: cv_selection.h), the
// log-log interpolation baseline on the same held-out sizes and every form's held-out error, so
// a user sees how well each form, and the choice among them, predicts sizes it was not fitted to.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gpucal::calibration {

// A header line and one line per group; "-" where an error was not computed.
std::string format_fit_report(const nlohmann::json& calibration);

}  // namespace gpucal::calibration
