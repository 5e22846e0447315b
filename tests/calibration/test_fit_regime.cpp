// The regime-aware piecewise α–β form, the table form, leave-one-out, and the choice of the
// best form per group.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "app/fit/comm_fits.h"
#include "app/fit/comm_forms.h"
#include "app/fit/fit_regime.h"
#include "app/fit/fit_table.h"
#include "app/fit/holdout.h"
#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

// Three NCCL-like regimes (a latency floor, a mid protocol, a bandwidth-bound protocol), the
// fastest line at each size, sampled at 2^lo..2^hi with multiplicative noise.
struct ThreeRegimes {
  double operator()(double b) const {
    const double ll = 20.0 + b / 2e3, ll128 = 35.0 + b / 20e3, simple = 80.0 + b / 150e3;
    return std::min({ll, ll128, simple});
  }
};

std::vector<SizeTimePoint> sample(const std::function<double(double)>& f, int lo, int hi, double noise,
                                  unsigned seed = 3) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, noise);
  std::vector<SizeTimePoint> points;
  for (int e = lo; e <= hi; ++e) {
    const double s = std::exp2(e);
    points.push_back({s, f(s) * (1 + n(rng))});
  }
  return points;
}

TEST(RegimeFit, FindsTheRegimesOfAProtocolSwitchingCurve) {
  const auto points = sample(ThreeRegimes{}, 3, 33, 0.005);
  const RegimeParams p = fit_regime(points, 1.0);
  EXPECT_EQ(p.breakpoints_from, "segmented regression (BIC)");
  ASSERT_GE(p.segments.size(), 3u);
  ASSERT_LE(p.segments.size(), 5u);
  // The largest sizes are on the bandwidth-bound line: 150 GB/s, 80 us.
  const RegimeSegment& last = p.segments.back();
  EXPECT_NEAR(1.0 / (last.us_per_bus_byte * 1e3), 150.0, 7.5);
  EXPECT_NEAR(last.alpha_us, 80.0, 15.0);
  // It predicts every size within a few percent, and the held-out sizes too.
  for (const auto& pt : points)
    EXPECT_NEAR(predict_time_us(p, pt.size_bytes, 1.0) / pt.time_us, 1.0, 0.05) << pt.size_bytes;
  const HeldOutError h = heldout_error(points, kRegimeMinSizes, [](const auto& train, const auto& sizes) {
    const RegimeParams q = fit_regime(train, 1.0);
    std::vector<double> out;
    for (double s : sizes) out.push_back(predict_time_us(q, s, 1.0));
    return out;
  });
  ASSERT_TRUE(h.computed);
  EXPECT_LT(h.mape_pct, 3.0);
}

TEST(RegimeFit, FallsOnlyInGapsMarkedDecreasingAndBridgesAreContinuous) {
  const auto points = sample(ThreeRegimes{}, 3, 33, 0.01, 11);
  for (const std::string& rule : regime_gap_rules()) {
    RegimeParams p = fit_regime(points, 1.0);
    p.gap_rule = rule;
    auto in_falling_gap = [&](double b) {
      for (std::size_t i = 0; i < p.gaps.size(); ++i)
        if (b >= p.gaps[i].from_bus_bytes * (1 - 1e-9) && b <= p.gaps[i].to_bus_bytes * (1 + 1e-9))
          return regime_gap_falls(p, i);
      return false;
    };
    double previous = 0, previous_b = 0;
    for (double e = 2.0; e <= 34.0; e += 0.01) {
      const double b = std::exp2(e), t = predict_time_us(p, b, 1.0);
      if (t < previous * (1 - 1e-12))
        EXPECT_TRUE(in_falling_gap(b) || in_falling_gap(previous_b)) << rule << " falls at 2^" << e;
      previous = t;
      previous_b = b;
    }
    if (rule != "bridge") continue;
    for (const auto& gap : p.gaps)
      for (double edge : {gap.from_bus_bytes, gap.to_bus_bytes})
        EXPECT_NEAR(predict_time_us(p, edge * (1 - 1e-9), 1.0), predict_time_us(p, edge * (1 + 1e-9), 1.0),
                    1e-6 * predict_time_us(p, edge, 1.0));
  }
  // Without noise the measurements never fall, and neither does the model.
  const RegimeParams exact = fit_regime(sample(ThreeRegimes{}, 3, 33, 0.0), 1.0);
  double previous = 0;
  for (double e = 2.0; e <= 34.0; e += 0.01) {
    const double t = predict_time_us(exact, std::exp2(e), 1.0);
    EXPECT_GE(t, previous * (1 - 1e-12)) << "at 2^" << e;
    previous = t;
  }
}

TEST(RegimeFit, GapRulesPlaceAStepAtTheEndOrStartOfTheGap) {
  // A flat regime, a step up between 2^10 and 2^12 (an MPI eager limit), a steep regime.
  std::vector<SizeTimePoint> points;
  for (int e = 0; e <= 10; ++e) points.push_back({std::exp2(e), 10.0});
  for (int e = 12; e <= 20; ++e) points.push_back({std::exp2(e), 30.0 + std::exp2(e) / 1e3});
  RegimeParams p = fit_regime(points, 1.0);
  ASSERT_EQ(p.segments.size(), 2u);
  ASSERT_FALSE(p.gaps[0].intersection);
  const double mid = std::exp2(11);
  p.gap_rule = "lower";
  EXPECT_NEAR(predict_time_us(p, mid, 1.0), 10.0, 1e-6);
  p.gap_rule = "upper";
  EXPECT_NEAR(predict_time_us(p, mid, 1.0), 30.0 + mid / 1e3, 1e-6);
  p.gap_rule = "bridge";
  const double bridge = predict_time_us(p, mid, 1.0);
  EXPECT_GT(bridge, 10.0);
  EXPECT_LT(bridge, 30.0 + mid / 1e3);
  // The rule is chosen by leave-one-out and its evidence recorded.
  const RegimeParams chosen = fit_regime(points, 1.0);
  EXPECT_EQ(chosen.gap_rule_loo_mape_pct.size(), 3u);
}

TEST(RegimeFit, BreakpointsFollowNcclAlgoAndProtoLabelsWhenEveryPointHasOne) {
  auto points = sample(ThreeRegimes{}, 3, 30, 0.0);
  for (auto& p : points)
    p.label = p.size_bytes < 4096 ? "TREE/LL" : p.size_bytes < 1048576 ? "RING/LL128" : "RING/SIMPLE";
  const RegimeParams p = fit_regime(points, 1.0);
  EXPECT_EQ(p.breakpoints_from, "nccl_algo/nccl_proto");
  ASSERT_EQ(p.segments.size(), 3u);
  EXPECT_EQ(p.segments[0].label, "TREE/LL");
  EXPECT_DOUBLE_EQ(p.segments[1].from_bus_bytes, 4096);
  EXPECT_DOUBLE_EQ(p.segments[2].from_bus_bytes, 1048576);
  // One unlabelled point: segmented regression instead.
  points[5].label.clear();
  EXPECT_EQ(fit_regime(points, 1.0).breakpoints_from, "segmented regression (BIC)");
}

TEST(RegimeFit, RefusesTooFewSizes) {
  EXPECT_THROW(fit_regime({{1e3, 1.0}, {2e3, 1.1}}, 1.0), std::invalid_argument);
  EXPECT_THROW(fit_regime({{1e3, 1.0}, {2e3, 1.1}, {4e3, 1.2}}, 0.0), std::invalid_argument);
}

TEST(TableForm, InterpolatesMonotonicallyWithoutOvershoot) {
  std::vector<SizeTimePoint> points;
  const std::vector<double> times{10, 10, 10.5, 30, 31, 60, 120, 240};
  for (std::size_t i = 0; i < times.size(); ++i) {
    points.push_back({std::exp2(10 + 2.0 * i), times[i]});
    points.push_back(
        {std::exp2(10 + 2.0 * i), times[i] * 1.2});  // a slower duplicate: the minimum is the knot
  }
  const TableParams t = fit_table(points);
  ASSERT_EQ(t.size_bytes.size(), times.size());
  for (const std::string& interpolation : table_interpolations()) {
    TableParams q = t;
    q.interpolation = interpolation;
    for (std::size_t i = 0; i < times.size(); ++i)
      EXPECT_NEAR(predict_time_us(q, t.size_bytes[i]), times[i], 1e-9);
    for (std::size_t i = 0; i + 1 < times.size(); ++i) {
      double previous = times[i];
      for (double u = 0.01; u < 1.0; u += 0.01) {
        const double s = std::exp2(10 + 2.0 * (i + u));
        const double v = predict_time_us(q, s);
        EXPECT_GE(v, times[i] - 1e-9);
        EXPECT_LE(v, times[i + 1] + 1e-9);
        EXPECT_GE(v, previous - 1e-9);
        previous = v;
      }
    }
    // Below the smallest size: its time; above the largest: at most proportional to size.
    EXPECT_DOUBLE_EQ(predict_time_us(q, 1.0), 10.0);
    EXPECT_LE(predict_time_us(q, t.size_bytes.back() * 4), 240.0 * 4 + 1e-9);
  }
}

TEST(CrossValidation, LeaveOneOutPredictsEachSizeFromTheOthers) {
  std::vector<SizeTimePoint> points;
  for (int e = 0; e < 6; ++e) points.push_back({std::exp2(e), 1.0 + e});
  // A "model" that predicts the mean of the training times: errors are known exactly.
  const HeldOutError h = leave_one_out_error(points, 3, [](const auto& train, const auto& sizes) {
    double sum = 0;
    for (const auto& p : train) sum += p.time_us;
    return std::vector<double>(sizes.size(), sum / static_cast<double>(train.size()));
  });
  ASSERT_TRUE(h.computed);
  double expected = 0;
  for (int e = 0; e < 6; ++e) {
    const double mean_others = (21.0 - (1.0 + e)) / 5.0;
    expected += std::abs(mean_others - (1.0 + e)) / (1.0 + e);
  }
  EXPECT_NEAR(h.mape_pct, 100.0 * expected / 6.0, 1e-9);
  EXPECT_FALSE(leave_one_out_error(points, 6, [](const auto&, const auto& s) {
                 return std::vector<double>(s.size(), 1.0);
               }).computed);
}

TEST(BestForm, IsTheLowestCrossValidatedErrorUnlessTheTableIsWithinOneStandardErrorAndSaysWhy) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir);
  const nlohmann::json comm = fit_communication(load_results_dir(dir));
  ASSERT_FALSE(comm["collectives"].empty());
  for (const auto& g : comm["collectives"]) {
    const auto& best = g["best"];
    ASSERT_TRUE(best["form"].is_string()) << best.dump();
    const std::string form = best["form"];
    double lowest = 1e300, table = -1;
    for (const auto& r : best["ranking"]) {
      lowest = std::min(lowest, r["score_pct"].get<double>());
      if (r["form"] == "table") table = r["score_pct"];
    }
    const std::string top = best["ranking"][0]["form"];
    const std::string reason = best["reason"];
    if (form == top) {
      EXPECT_NE(reason.find("lowest cross-validated error"), std::string::npos) << reason;
      EXPECT_DOUBLE_EQ(best["score_pct"].get<double>(), lowest);
      if (top != "table") {  // it beat the table by more than one standard error
        ASSERT_TRUE(best["choice"].contains("standard_error_pct")) << best.dump();
        EXPECT_GT(table - lowest, best["choice"]["standard_error_pct"].get<double>());
      }
    } else {  // the table, kept: the lowest score is within one standard error of it
      EXPECT_EQ(form, "table");
      EXPECT_NE(reason.find("table kept"), std::string::npos) << reason;
      EXPECT_DOUBLE_EQ(best["score_pct"].get<double>(), table);
      EXPECT_LE(table - lowest, best["choice"]["standard_error_pct"].get<double>());
    }
    EXPECT_DOUBLE_EQ(
        best["score_pct"].get<double>(),
        (g[form]["heldout"]["mape_pct"].get<double>() + g[form]["loo"]["mape_pct"].get<double>()) / 2);
    // Every form the group can carry is there, and evaluates through the stored parameters.
    for (const auto& f : comm_form_names()) {
      ASSERT_TRUE(g.contains(f)) << f;
      if (g[f].contains("error")) continue;
      EXPECT_GT(predict_comm_form(f, g[f], 1e6, g["bus_factor"]), 0.0) << f;
      EXPECT_TRUE(g["model_curves"].contains(f + "_busbw_gbps")) << f;
    }
    EXPECT_TRUE(g["baseline_loglog"]["heldout"]["computed"].get<bool>());
  }
}

}  // namespace
}  // namespace gpucal::calibration
