// The `table` form: measured times as knots, interpolated in ln t against ln S by one of two
// monotone rules: `pchip`, piecewise-cubic Hermite with Fritsch–Carlson slopes (as scipy's
// PCHIP: smooth across knots), or `linear`, straight lines. Either way the curve between two
// knots stays within their values (no overshoot) and is monotone. The rule is chosen per fit by
// leave-one-out over the knots; `linear` must beat `pchip` by 10% to be chosen (the smoother
// rule is kept unless the data clearly say otherwise). Each knot is the minimum of the times
// measured at that size. Outside the knots: below the smallest size
// the smallest size's time (a latency floor); above the largest, t grows as S^k with k the last
// interval's log-log slope clamped to [0, 1] (1 = bandwidth bound).
// loglog_linear() is the plain baseline the fit report compares every form with: straight lines
// in log t against log S between the same knots, extended the same way.
#pragma once

#include <string>
#include <vector>

#include "fit.h"

namespace gpucal::calibration {

struct TableParams {
  std::vector<double> size_bytes;  // increasing
  std::vector<double> time_us;
  std::string interpolation = "pchip";                     // pchip or linear
  double loo_mape_pct_pchip = 0, loo_mape_pct_linear = 0;  // the choice's evidence (0: not computed)
};

TableParams fit_table(const std::vector<SizeTimePoint>& points);  // throws with < kTableMinSizes sizes
double predict_time_us(const TableParams& p, double size_bytes);  // by p.interpolation
double predict_loglog_linear(const TableParams& p, double size_bytes);

constexpr int kTableMinSizes = 2;

}  // namespace gpucal::calibration
