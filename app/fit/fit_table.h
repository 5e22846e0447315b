// The `table` form: measured times as knots, interpolated between neighbouring knots by one of
// three monotone rules:
//  - `pchip`: in ln t against ln S, piecewise-cubic Hermite with Fritsch–Carlson slopes (as
//    scipy's PCHIP: smooth across knots);
//  - `loglog`: straight lines in ln t against ln S (a power law between neighbours);
//  - `size_linear`: straight lines in t against S, i.e. t = α + S/β through the two neighbours:
//    exact wherever both neighbours lie in one α–β regime, which is most of a NCCL/MPI curve
//    (a power law is exact only where the time is all latency or all bandwidth).
// Every rule keeps the curve between two knots within their values (no overshoot) and monotone.
// The rule is chosen per fit by leave-one-out over the knots (lowest error; ties to the earlier
// rule in the list above). Each knot is the minimum of the times measured at that size (a
// repeat is slower only by noise: latency spikes only add). Outside the knots: below the smallest size
// the smallest size's time (a latency floor); above the largest, t grows as S^k with k the last
// interval's log-log slope clamped to [0, 1] (1 = bandwidth bound).
// loglog_linear() is the plain baseline the fit report compares every form with: straight lines
// in log t against log S between the same knots, extended the same way.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "app/fit/fit.h"

namespace gpucal::calibration {

struct TableParams {
  std::vector<double> size_bytes;  // increasing
  std::vector<double> time_us;
  std::string interpolation = "pchip";               // one of table_interpolations()
  std::map<std::string, double> interpolation_loo_mape_pct;  // the choice's evidence (empty: not computed)
};

const std::vector<std::string>& table_interpolations();  // pchip, loglog, size_linear

TableParams fit_table(const std::vector<SizeTimePoint>& points);  // throws with < kTableMinSizes sizes
double predict_time_us(const TableParams& p, double size_bytes);  // by p.interpolation
double predict_loglog_linear(const TableParams& p, double size_bytes);

constexpr int kTableMinSizes = 2;

}  // namespace gpucal::calibration
