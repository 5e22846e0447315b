// 90% prediction intervals for a communication group's chosen form (calibration.json's
// `interval`, results/SCHEMA.md), by split-conformal prediction on the form's leave-one-out
// residuals (holdout.h), normalised by where each size sits:
//   residual   r_i = |ln(predicted_i / measured_i)|, the leave-one-out prediction of point i
//              (each distinct size left out of a fit on all the others);
//   multiplier w(S), how hard size S is to predict from the measured sizes around it:
//     inside the measured range, between neighbouring measured sizes a < S < b:
//       w = max(kMinSpacingMultiplier, (log2 b - log2 a) / g)^kSpacingPower, g the reference gap
//       (the median leave-one-out span log2 s_{i+1} - log2 s_{i-1}: what the residuals saw),
//       times kBoundaryFactor when a regime switch of the regime form (its `gaps`) lies in [a, b];
//     beyond the measured range, d = log2 distance to the nearest measured size:
//       w = 1 + d / g (grows with how far the prediction reaches);
//     a measured size is predicted by its measurement: w = 0 (the interval is the spread of the
//       times measured there, comm_model.h);
//   score      s_i = r_i / w_i, w_i the multiplier of point i's size with its own size left out
//              (what the leave-one-out fit faced);
//   quantile   q = the k-th smallest score, k = ceil((n + 1) x level): the split-conformal
//              finite-sample correction (Vovk et al. 2005; Lei et al. 2018, "Distribution-free
//              predictive inference for regression"); with n < k (fewer than 9 residuals at 90%)
//              the largest score, marked `capped` (coverage then not guaranteed);
//   interval   [t e^{-q w(S)}, t e^{+q w(S)}] around the prediction t.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/fit/holdout.h"

namespace gpucal::calibration {

constexpr double kIntervalLevel = 0.9;
constexpr double kBoundaryFactor = 2.0;
constexpr double kSpacingPower = 1.0;
constexpr double kMinSpacingMultiplier = 0.5;

struct ConformalQuantile {
  double value = 0;  // the k-th smallest score (the largest when capped)
  int rank = 0;      // k = ceil((n + 1) x level)
  int n = 0;
  bool capped = false;  // k > n
};
// Throws std::invalid_argument on no scores or a level outside (0, 1).
ConformalQuantile conformal_quantile(std::vector<double> scores, double level);

// What the multiplier needs: the measured sizes and where regimes switch.
struct IntervalShape {
  std::vector<double> knots_log2;                        // distinct measured sizes, log2, ascending
  double reference_gap_log2 = 1;                         // g
  std::vector<std::pair<double, double>> switches_log2;  // [from, to] log2 S of each regime gap
};
// The median leave-one-out span of ascending knots (>= 3 knots; else the median gap; else 1).
double reference_gap_log2(const std::vector<double>& knots_log2);
// w at log2 size x; `excluded`: the index of a knot to leave out (-1: none). 0 on a knot.
double width_multiplier(const IntervalShape& shape, double log2_size, int excluded = -1);

// The group's `interval` object: {computed, form, level, method, ...} or {computed: false,
// reason} when the form's leave-one-out residuals were not computed. `regime` is the group's
// regime fit (its gaps mark the switches; null or an error object: none), `bus_factor` turns its
// bus bytes into sizes.
nlohmann::json fit_interval(const std::string& form, const HeldOutError& loo, const std::vector<double>& sizes_bytes,
                            const nlohmann::json& regime, double bus_factor);

struct IntervalAt {
  bool computed = false;
  double lo_us = 0, hi_us = 0;
  double halfwidth_log = 0, multiplier = 0;
};
// The interval around `time_us` predicted at size_bytes from a group's `interval` object
// (not computed when the object is absent or says so).
IntervalAt interval_at(const nlohmann::json& interval, double size_bytes, double time_us);

}  // namespace gpucal::calibration
