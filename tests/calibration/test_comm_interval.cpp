// comm_interval.h: the conformal quantile with its finite-sample correction, the width
// multiplier's widening rules, and the intervals comm_model.h attaches to predictions.
#include <gtest/gtest.h>

#include <cmath>

#include "app/fit/comm_fits.h"
#include "app/fit/comm_interval.h"
#include "app/fit/comm_model.h"
#include "app/common/results_dir.h"
#include "core/formulas/collective_formulas.h"
#include "core/output/csv_sink.h"
#include "core/output/result_columns.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

std::vector<double> one_to(int n) {
  std::vector<double> v;
  for (int i = n; i >= 1; --i) v.push_back(i);  // unsorted on purpose
  return v;
}

TEST(ConformalQuantile, TakesTheCeilOfNPlusOneTimesLevelSmallest) {
  // n = 19: k = ceil(20 x 0.9) = 18, not the plain 90th percentile's 17.1.
  ConformalQuantile q = conformal_quantile(one_to(19), 0.9);
  EXPECT_EQ(q.rank, 18);
  EXPECT_DOUBLE_EQ(q.value, 18);
  EXPECT_FALSE(q.capped);
  // n = 10: k = ceil(9.9) = 10, the largest.
  q = conformal_quantile(one_to(10), 0.9);
  EXPECT_EQ(q.rank, 10);
  EXPECT_DOUBLE_EQ(q.value, 10);
  EXPECT_FALSE(q.capped);
  // n = 9: (n + 1) x 0.9 is 9 up to rounding: k = 9, not 10.
  q = conformal_quantile(one_to(9), 0.9);
  EXPECT_EQ(q.rank, 9);
  EXPECT_FALSE(q.capped);
  // n = 5: k = 6 > n: the largest, capped (coverage not guaranteed).
  q = conformal_quantile(one_to(5), 0.9);
  EXPECT_EQ(q.rank, 6);
  EXPECT_DOUBLE_EQ(q.value, 5);
  EXPECT_TRUE(q.capped);
  EXPECT_THROW(conformal_quantile({}, 0.9), std::invalid_argument);
  EXPECT_THROW(conformal_quantile({1.0}, 1.0), std::invalid_argument);
}

IntervalShape even_knots() {
  IntervalShape s;
  for (int i = 0; i <= 10; ++i) s.knots_log2.push_back(i);
  s.reference_gap_log2 = reference_gap_log2(s.knots_log2);
  return s;
}

TEST(WidthMultiplier, ReferenceGapIsTheMedianLeaveOneOutSpan) {
  EXPECT_DOUBLE_EQ(reference_gap_log2({0, 1, 2, 3, 4}), 2);
  EXPECT_DOUBLE_EQ(reference_gap_log2({0, 1, 2, 3, 7, 8}), 3.5);  // spans 2, 2, 5, 5
  EXPECT_DOUBLE_EQ(reference_gap_log2({0, 3}), 3);
  EXPECT_DOUBLE_EQ(reference_gap_log2({5}), 1);
}

TEST(WidthMultiplier, ZeroOnAKnotAndScaledBySpacingInside) {
  const IntervalShape s = even_knots();
  EXPECT_DOUBLE_EQ(width_multiplier(s, 4), 0);
  EXPECT_DOUBLE_EQ(width_multiplier(s, 4.5), kMinSpacingMultiplier);  // gap 1 / g 2, floored at 0.5
  // A knot left out: its neighbours are two gaps apart, one reference gap.
  EXPECT_DOUBLE_EQ(width_multiplier(s, 5, 5), 1);
  // Sparse sizes: between 3 and 7 the gap is 4 / 3.5 reference gaps.
  IntervalShape sparse;
  sparse.knots_log2 = {0, 1, 2, 3, 7, 8};
  sparse.reference_gap_log2 = reference_gap_log2(sparse.knots_log2);
  EXPECT_NEAR(width_multiplier(sparse, 5), std::pow(4 / 3.5, kSpacingPower), 1e-12);
  EXPECT_GT(width_multiplier(sparse, 5), width_multiplier(sparse, 1.5));
}

TEST(WidthMultiplier, RegimeSwitchBetweenTheNeighboursWidens) {
  IntervalShape s = even_knots();
  s.switches_log2 = {{4, 5}};
  EXPECT_DOUBLE_EQ(width_multiplier(s, 4.5), kMinSpacingMultiplier * kBoundaryFactor);
  EXPECT_DOUBLE_EQ(width_multiplier(s, 3.5), kMinSpacingMultiplier);  // touches the switch, does not span it
  EXPECT_DOUBLE_EQ(width_multiplier(s, 4, 4), 1 * kBoundaryFactor);  // left out: 3..5 spans it
}

TEST(WidthMultiplier, GrowsWithLogDistanceBeyondTheMeasuredSizes) {
  const IntervalShape s = even_knots();  // g = 2
  EXPECT_DOUBLE_EQ(width_multiplier(s, -2), 2);
  EXPECT_DOUBLE_EQ(width_multiplier(s, 16), 4);
  EXPECT_LT(width_multiplier(s, 11), width_multiplier(s, 14));
  EXPECT_LT(width_multiplier(s, -1), width_multiplier(s, -6));
  EXPECT_GE(width_multiplier(s, 10.01), 1);  // never narrower than inside
  EXPECT_DOUBLE_EQ(width_multiplier(s, 0, 0), 1.5);  // the smallest left out: one gap beyond
}

TEST(FitInterval, QuantileOfNormalisedLeaveOneOutResiduals) {
  HeldOutError loo;
  loo.computed = true;
  std::vector<double> sizes;
  for (int i = 0; i <= 10; ++i) {
    sizes.push_back(std::exp2(10 + i));
    loo.point_sizes_bytes.push_back(std::exp2(10 + i));
    loo.log_ratio.push_back(i % 2 ? 0.01 * i : -0.01 * i);
  }
  const nlohmann::json j = fit_interval("table", loo, sizes, nullptr, 1.0);
  ASSERT_TRUE(j["computed"].get<bool>());
  EXPECT_EQ(j["residuals"], 11);
  EXPECT_EQ(j["rank"], 11);  // ceil(12 x 0.9)
  EXPECT_FALSE(j["capped"].get<bool>());
  // Interior knots score r / 1; the ends r / 1.5 (extrapolated by one gap): the largest score is
  // knot 9's 0.09 (knot 10 scores 0.1 / 1.5).
  EXPECT_NEAR(j["quantile_log"].get<double>(), 0.09, 1e-12);
  const IntervalAt inside = interval_at(j, std::exp2(15.5), 100);
  ASSERT_TRUE(inside.computed);
  EXPECT_LT(inside.lo_us, 100);
  EXPECT_GT(inside.hi_us, 100);
  EXPECT_NEAR(std::log(inside.hi_us / 100), 0.09 * kMinSpacingMultiplier, 1e-12);
  const IntervalAt beyond = interval_at(j, std::exp2(24), 100);
  EXPECT_GT(beyond.hi_us, inside.hi_us);
  EXPECT_LT(beyond.lo_us, inside.lo_us);
  HeldOutError none;
  none.reason_not_computed = "too few sizes";
  EXPECT_FALSE(fit_interval("table", none, sizes, nullptr, 1.0)["computed"].get<bool>());
  EXPECT_FALSE(interval_at(nlohmann::json{{"computed", false}}, 1e6, 1).computed);
}

// allreduce with a protocol step at 2^20 B: the time doubles there.
double stepped_us(double size) { return (size < std::exp2(20) ? 10.0 : 20.0) + size / 50e3; }

TEST(CommModelInterval, EveryPredictionIsInsideItsIntervalWhichWidensBeyondTheSizes) {
  const std::string dir = testing::fresh_temp_dir();
  {
    CsvSink sink(dir + "/collectives.csv", collectives_columns());
    for (int e = 10; e <= 30; ++e) {
      const double s = std::exp2(e), t = stepped_us(s);
      Row row;
      row.set("bench", "collectives").set("impl", "nccl").set("point", "p/" + std::to_string(e));
      row.set("status", "ok").set("regime", "hot").set("samples", 10).set("time_us_median", t);
      row.set("time_us_p10", t).set("time_us_p90", t).set("collective", "allreduce").set("dtype", "fp32");
      row.set("nranks", 8).set("nnodes", 1).set("ranks_per_node", 8).set("spans_nodes", false);
      row.set("size_bytes", s).set("bus_factor", allreduce_bus_factor(8));
      sink.write(row);
    }
    sink.close();
  }
  const nlohmann::json calibration{{"communication", fit_communication(load_results_dir(dir))}};
  const nlohmann::json& interval = calibration["communication"]["collectives"][0]["interval"];
  ASSERT_TRUE(interval["computed"].get<bool>()) << interval.dump();
  EXPECT_EQ(interval["form"], calibration["communication"]["collectives"][0]["best"]["form"]);
  const CommModel model(calibration);
  double previous_width = 0;
  for (double e : {15.5, 30.0, 31.0, 33.0, 36.0}) {
    const CommPrediction p = model.predict({"allreduce", 8, 1, 0, std::exp2(e), ""});
    ASSERT_TRUE(p.has_interval) << p.interval_rule;
    EXPECT_LE(p.lo_us, p.time_us);
    EXPECT_GE(p.hi_us, p.time_us);
    if (e > 30) {
      EXPECT_GT(std::log(p.hi_us / p.lo_us), previous_width) << e;  // wider the further out
      previous_width = std::log(p.hi_us / p.lo_us);
    }
  }
  // Beyond the measured rank counts: wider than the group's own interval at the same size.
  const CommPrediction own = model.predict({"allreduce", 8, 1, 0, std::exp2(15.5), ""});
  const CommPrediction more = model.predict({"allreduce", 4, 1, 0, std::exp2(15.5), ""});
  EXPECT_GT(std::log(more.hi_us / more.lo_us), std::log(own.hi_us / own.lo_us));
}

}  // namespace
}  // namespace gpucal::calibration
