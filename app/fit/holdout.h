// Cross-validated error of a fit, two ways:
//  - held out: the distinct sizes are sorted and every 3rd one (positions 1, 4, 7, ... so the
//    smallest size always stays in the fit) is held out; the model is fitted on the remaining
//    points and its predicted time is compared with the measured time on the held-out points;
//  - leave one out: each distinct size in turn is left out of a fit on all the others and
//    predicted (the two end sizes are then extrapolations).
// Errors are relative: |predicted - measured| / measured, averaged over the points (MAPE).
// The parameters users get come from a separate fit on all points.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/fit/fit.h"

namespace gpucal::calibration {

struct HeldOutError {
  bool computed = false;
  std::string reason_not_computed;  // when !computed
  double mape_pct = 0;              // mean |pred - meas| / meas over held-out points, percent
  double max_abs_rel_err_pct = 0;   // max of the same, percent
  int fit_points = 0;
  int heldout_points = 0;
  std::vector<double> heldout_sizes_bytes;
  // |pred - meas| / meas per evaluated point, percent, in a fixed order (the points' order within
  // each held-out size, sizes ascending): two candidates' lists pair up point by point.
  std::vector<double> abs_rel_err_pct;
  // The same points, signed in log space: ln(predicted / measured), and each point's size
  // (the conformal intervals of comm_interval.h are made from these).
  std::vector<double> log_ratio;
  std::vector<double> point_sizes_bytes;
};

constexpr int kHoldoutEvery = 3;
constexpr int kMaxLeaveOutFolds = 32;

// Indices (into `points`) whose size is held out.
std::vector<std::size_t> heldout_indices(const std::vector<SizeTimePoint>& points);

// `fit_and_predict(fit_points, heldout_sizes)` returns predicted times for heldout_sizes.
// `min_fit_sizes`: distinct sizes the fit needs; fewer -> not computed, with the reason.
using FitAndPredict =
    std::function<std::vector<double>(const std::vector<SizeTimePoint>&, const std::vector<double>&)>;
HeldOutError heldout_error(const std::vector<SizeTimePoint>& points, int min_fit_sizes,
                           const FitAndPredict& fit_and_predict);

// Leave-one-out over the distinct sizes; `heldout_sizes_bytes` lists every size. Beyond
// kMaxLeaveOutFolds distinct sizes, each of kMaxLeaveOutFolds folds leaves out an interleaved
// group (every kMaxLeaveOutFolds-th size by rank): every size is still predicted by a fit
// without it, and a dense sweep costs 32 fits instead of one per size. Not computed when fewer
// than min_fit_sizes + 1 distinct sizes exist; a fold whose fit fails makes the whole estimate
// not computed (with the reason).
HeldOutError leave_one_out_error(const std::vector<SizeTimePoint>& points, int min_fit_sizes,
                                 const FitAndPredict& fit_and_predict);

// Relative errors of predictions against measurements: {mape_pct, max_abs_rel_err_pct}.
std::pair<double, double> relative_errors_pct(const std::vector<double>& predicted,
                                              const std::vector<double>& measured);
// The same, point by point: |predicted - measured| / measured, percent.
std::vector<double> abs_rel_errors_pct(const std::vector<double>& predicted, const std::vector<double>& measured);

}  // namespace gpucal::calibration
