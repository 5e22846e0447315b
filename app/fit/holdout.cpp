#include "app/fit/holdout.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>

namespace gpucal::calibration {

std::vector<std::size_t> heldout_indices(const std::vector<SizeTimePoint>& points) {
  std::set<double> sizes;
  for (const auto& p : points) sizes.insert(p.size_bytes);
  std::set<double> held;
  int position = 0;
  for (double s : sizes)
    if (position++ % kHoldoutEvery == 1) held.insert(s);
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (held.count(points[i].size_bytes)) indices.push_back(i);
  return indices;
}

std::vector<double> abs_rel_errors_pct(const std::vector<double>& predicted, const std::vector<double>& measured) {
  if (predicted.size() != measured.size() || measured.empty())
    throw std::invalid_argument("relative_errors_pct: need equal, non-empty vectors");
  std::vector<double> errors;
  for (std::size_t i = 0; i < measured.size(); ++i)
    errors.push_back(100.0 * std::abs(predicted[i] - measured[i]) / measured[i]);
  return errors;
}

namespace {
// {mean, max} of per-point errors (non-empty: abs_rel_errors_pct refuses empty inputs).
std::pair<double, double> mean_and_max(const std::vector<double>& errors) {
  double sum = 0, max_err = 0;
  for (double e : errors) {
    sum += e;
    max_err = std::max(max_err, e);
  }
  return {sum / static_cast<double>(errors.size()), max_err};
}

// The error figures of `result` from its predictions at `sizes`: per point (relative and log
// ratio), their mean and their maximum.
void set_errors(HeldOutError& result, const std::vector<double>& predicted, const std::vector<double>& measured,
                const std::vector<double>& sizes) {
  result.abs_rel_err_pct = abs_rel_errors_pct(predicted, measured);
  result.log_ratio.clear();
  for (std::size_t i = 0; i < measured.size(); ++i)
    result.log_ratio.push_back(predicted[i] > 0 ? std::log(predicted[i] / measured[i]) : INFINITY);
  result.point_sizes_bytes = sizes;
  std::tie(result.mape_pct, result.max_abs_rel_err_pct) = mean_and_max(result.abs_rel_err_pct);
}
}  // namespace

std::pair<double, double> relative_errors_pct(const std::vector<double>& predicted,
                                              const std::vector<double>& measured) {
  return mean_and_max(abs_rel_errors_pct(predicted, measured));
}

HeldOutError heldout_error(const std::vector<SizeTimePoint>& points, int min_fit_sizes,
                           const FitAndPredict& fit_and_predict) {
  HeldOutError result;
  const std::vector<std::size_t> held = heldout_indices(points);
  std::vector<SizeTimePoint> fit_points, held_points;
  std::set<double> fit_sizes;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (std::binary_search(held.begin(), held.end(), i)) {
      held_points.push_back(points[i]);
    } else {
      fit_points.push_back(points[i]);
      fit_sizes.insert(points[i].size_bytes);
    }
  }
  result.fit_points = static_cast<int>(fit_points.size());
  result.heldout_points = static_cast<int>(held_points.size());
  if (held_points.empty() || static_cast<int>(fit_sizes.size()) < min_fit_sizes) {
    result.reason_not_computed = "too few distinct sizes: " + std::to_string(fit_sizes.size()) +
                                 " left for the fit (needs " + std::to_string(min_fit_sizes) + ") and " +
                                 std::to_string(held_points.size()) + " held out";
    return result;
  }
  std::vector<double> sizes, measured;
  for (const auto& p : held_points) {
    sizes.push_back(p.size_bytes);
    measured.push_back(p.time_us);
  }
  try {
    set_errors(result, fit_and_predict(fit_points, sizes), measured, sizes);
  } catch (const std::exception& e) {
    result.reason_not_computed = std::string("fit on the training sizes failed: ") + e.what();
    return result;
  }
  std::set<double> distinct(sizes.begin(), sizes.end());
  result.heldout_sizes_bytes.assign(distinct.begin(), distinct.end());
  result.computed = true;
  return result;
}

HeldOutError leave_one_out_error(const std::vector<SizeTimePoint>& points, int min_fit_sizes,
                                 const FitAndPredict& fit_and_predict) {
  HeldOutError result;
  std::set<double> sizes;
  for (const auto& p : points) sizes.insert(p.size_bytes);
  if (static_cast<int>(sizes.size()) < min_fit_sizes + 1) {
    result.reason_not_computed = "too few distinct sizes for leave-one-out: " + std::to_string(sizes.size()) +
                                 " (needs " + std::to_string(min_fit_sizes + 1) + ")";
    return result;
  }
  // Fold f leaves out the sizes of rank f, f + folds, f + 2 folds, ...: one size per fold up to
  // kMaxLeaveOutFolds sizes, interleaved groups beyond (a dense sweep of 256 sizes: 32 fits, not 256).
  // A fold beyond 32 sizes leaves out at most ceil(n / 32) of n > 32, so its fit keeps at least
  // 31 sizes, more than any form needs: the guard above covers every fold.
  const std::vector<double> by_rank(sizes.begin(), sizes.end());
  const std::size_t folds = std::min(by_rank.size(), static_cast<std::size_t>(kMaxLeaveOutFolds));
  std::vector<double> predicted, measured, point_sizes;
  for (std::size_t f = 0; f < folds; ++f) {
    std::set<double> left_out;
    for (std::size_t r = f; r < by_rank.size(); r += folds) left_out.insert(by_rank[r]);
    std::vector<SizeTimePoint> train;
    std::vector<double> held_sizes;
    for (const auto& p : points) {
      if (left_out.count(p.size_bytes) != 0) {
        held_sizes.push_back(p.size_bytes);
        point_sizes.push_back(p.size_bytes);
        measured.push_back(p.time_us);
      } else {
        train.push_back(p);
      }
    }
    try {
      for (double t : fit_and_predict(train, held_sizes)) predicted.push_back(t);
    } catch (const std::exception& e) {
      result.reason_not_computed =
          "leave-one-out fit without size " + std::to_string(*left_out.begin()) +
          (left_out.size() > 1 ? " (and " + std::to_string(left_out.size() - 1) + " more)" : std::string()) +
          " failed: " + e.what();
      return result;
    }
  }
  set_errors(result, predicted, measured, point_sizes);
  result.fit_points = static_cast<int>(points.size());
  result.heldout_points = static_cast<int>(measured.size());
  result.heldout_sizes_bytes.assign(sizes.begin(), sizes.end());
  result.computed = true;
  return result;
}

}  // namespace gpucal::calibration
