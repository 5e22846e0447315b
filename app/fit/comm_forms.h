// The communication model forms by name, each fitted into and evaluated from the very
// parameter object calibration.json stores under the form's key, so the fitter, the plots'
// model curves, the exporters and comm_model.h evaluate one formula (fit.h, fit_regime.h,
// fit_table.h) and nothing else.
//   alpha_beta  {alpha_us, beta_gbps}
//   sigmoid     {H_gbps, k_per_log2_byte, x0_log2_bytes, y0_gbps}
//   piecewise   {floor_us, knee_bus_bytes, sat_bus_bytes, bw_max_gbps, overhead_us}
//   regime      {breakpoints_from, segments [{from_bus_bytes, to_bus_bytes, alpha_us, beta_gbps
//                (null: flat), sizes, label}], gaps [{from_bus_bytes, to_bus_bytes, rule, switch_bus_bytes,
//                decreasing}]}
//   table       {interpolation, knots_size_bytes [...], knots_time_us [...]}
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/fit/fit.h"

namespace gpucal::calibration {

// In the order the fit report lists them.
const std::vector<std::string>& comm_form_names();
// Distinct sizes a form's fit needs (the held-out fit must keep this many).
int comm_form_min_sizes(const std::string& form);

// Fits `form`. Throws on failure or an unknown form.
nlohmann::json fit_comm_form(const std::string& form, const std::vector<SizeTimePoint>& points,
                             double bus_factor);
// Predicted time (µs) of a message of size_bytes (nccl-tests S); throws std::invalid_argument
// for an unknown form or parameters that are not the form's.
double predict_comm_form(const std::string& form, const nlohmann::json& params, double size_bytes,
                         double bus_factor);

}  // namespace gpucal::calibration
