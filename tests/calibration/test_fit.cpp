#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "app/fit/comm_fits.h"
#include "app/fit/fit.h"
#include "app/fit/holdout.h"
#include "app/common/results_dir.h"
#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

// Sizes 2^lo..2^hi (step 2^step), times from `model`, multiplicative Gaussian noise, fixed seed.
template <class Model>
std::vector<SizeTimePoint> synthesize(Model model, int lo, int hi, double noise, unsigned seed = 7, int step = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, noise);
  std::vector<SizeTimePoint> points;
  for (int e = lo; e <= hi; e += step) {
    const double s = std::exp2(e);
    points.push_back({s, model(s) * (1.0 + n(rng))});
  }
  return points;
}

TEST(AlphaBetaFit, RecoversKnownAlphaAndBusBetaFromNoisyData) {
  const double factor = 2.0 * 7 / 8;  // allreduce, 8 ranks
  const AlphaBetaParams truth{8.0, 100.0};
  const auto points = synthesize([&](double s) { return predict_time_us(truth, s, factor); }, 4, 30, 0.02);
  const AlphaBetaParams fit = fit_alpha_beta(points, factor);
  EXPECT_NEAR(fit.alpha_us, 8.0, 0.4);
  EXPECT_NEAR(fit.beta_gbps, 100.0, 3.0);
  // The formula itself: 1 GB/s moves 1e3 bytes per microsecond.
  EXPECT_DOUBLE_EQ(predict_time_us(AlphaBetaParams{0.0, 1.0}, 1e3, 1.0), 1.0);
}

TEST(AlphaBetaFit, NegativeInterceptIsClampedToZero) {
  // Pure bandwidth data with small-size times below the line: the free fit would give alpha < 0.
  std::vector<SizeTimePoint> points{{1e3, 0.5}, {1e6, 10.0}, {1e9, 10000.0}};
  const AlphaBetaParams fit = fit_alpha_beta(points, 1.0);
  EXPECT_GE(fit.alpha_us, 0.0);
  EXPECT_GT(fit.beta_gbps, 0.0);
}

TEST(SigmoidFit, RecoversKnownParametersFromNoisyData) {
  const SigmoidParams truth{200.0, 0.8, 20.0, 2.0};
  const auto points = synthesize([&](double s) { return predict_time_us(truth, s, 1.0); }, 8, 32, 0.02);
  const SigmoidParams fit = fit_sigmoid(points, 1.0);
  EXPECT_NEAR(fit.height_gbps, 200.0, 10.0);
  EXPECT_NEAR(fit.steepness, 0.8, 0.08);
  EXPECT_NEAR(fit.midpoint_log2_bytes, 20.0, 0.3);
  EXPECT_NEAR(fit.offset_gbps, 2.0, 0.5);
}

TEST(PiecewiseFit, RecoversFloorKneeSaturationAndBandwidth) {
  const PiecewiseParams truth{10.0, std::exp2(14), std::exp2(24), 150.0, 5.0};
  const auto points = synthesize([&](double s) { return predict_time_us(truth, s, 1.0); }, 6, 32, 0.01);
  const PiecewiseParams fit = fit_piecewise(points, 1.0);
  EXPECT_NEAR(fit.floor_us, 10.0, 0.5);
  EXPECT_NEAR(std::log2(fit.knee_bus_bytes), 14.0, 1.0);
  EXPECT_NEAR(std::log2(fit.sat_bus_bytes), 24.0, 1.0);
  EXPECT_NEAR(fit.bw_max_gbps, 150.0, 4.5);
  EXPECT_NEAR(fit.overhead_us, 5.0, 3.0);
}

TEST(PiecewiseModel, IsContinuousAtKneeAndSaturation) {
  const PiecewiseParams p{10.0, std::exp2(14), std::exp2(24), 150.0, 5.0};
  for (double edge : {std::exp2(14), std::exp2(24)}) {
    EXPECT_NEAR(predict_time_us(p, edge * (1 - 1e-9), 1.0), predict_time_us(p, edge * (1 + 1e-9), 1.0), 1e-6);
  }
  EXPECT_DOUBLE_EQ(predict_time_us(p, 100.0, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(predict_time_us(p, std::exp2(30), 1.0), 5.0 + std::exp2(30) / 150e3);
}

TEST(HeldOut, HoldsOutEveryThirdDistinctSizeStartingAtTheSecond) {
  std::vector<SizeTimePoint> points;
  for (int i = 0; i < 9; ++i) points.push_back({std::exp2(10 + i), 1.0});
  points.push_back({std::exp2(11), 1.1});  // a repeat of a held-out size is held out too
  EXPECT_EQ(heldout_indices(points), (std::vector<std::size_t>{1, 4, 7, 9}));
}

TEST(HeldOut, ErrorIsMeasuredOnHeldOutPointsOnly) {
  const AlphaBetaParams truth{5.0, 50.0};
  auto points = synthesize([&](double s) { return predict_time_us(truth, s, 1.0); }, 4, 28, 0.0);
  auto fit_predict = [](const std::vector<SizeTimePoint>& train, const std::vector<double>& sizes) {
    const AlphaBetaParams p = fit_alpha_beta(train, 1.0);
    std::vector<double> out;
    for (double s : sizes) out.push_back(predict_time_us(p, s, 1.0));
    return out;
  };
  const HeldOutError clean = heldout_error(points, kAlphaBetaMinSizes, fit_predict);
  ASSERT_TRUE(clean.computed);
  EXPECT_LT(clean.max_abs_rel_err_pct, 1e-6);
  EXPECT_EQ(clean.heldout_points, 8);  // 25 sizes: positions 1, 4, ..., 22
  EXPECT_EQ(clean.fit_points, 17);

  // An outlier (3x the true time) planted at a HELD-OUT size is seen in full: the fit never
  // saw it, so the prediction is the true time and |pred - meas| / meas = 2/3.
  const std::size_t held = heldout_indices(points).at(2);
  auto with_heldout_outlier = points;
  with_heldout_outlier[held].time_us *= 3.0;
  const HeldOutError e = heldout_error(with_heldout_outlier, kAlphaBetaMinSizes, fit_predict);
  ASSERT_TRUE(e.computed);
  EXPECT_NEAR(e.max_abs_rel_err_pct, 100.0 * 2.0 / 3.0, 1e-6);
  EXPECT_NEAR(e.mape_pct, 100.0 * 2.0 / 3.0 / e.heldout_points, 1e-6);

  // The same outlier at a TRAINING size is never scored itself: the held-out error is what it does to
  // the fit, far below the 67% an in-sample error would include.
  auto with_training_outlier = points;
  with_training_outlier[held + 1].time_us *= 3.0;
  const HeldOutError t = heldout_error(with_training_outlier, kAlphaBetaMinSizes, fit_predict);
  ASSERT_TRUE(t.computed);
  EXPECT_LT(t.max_abs_rel_err_pct, 50.0);
}

TEST(HeldOut, NotComputedWithTooFewSizesAndSaysWhy) {
  std::vector<SizeTimePoint> points{{1e3, 1}, {1e4, 2}, {1e5, 3}};
  const HeldOutError e = heldout_error(points, kSigmoidMinSizes, [](auto&, auto&) { return std::vector<double>{}; });
  EXPECT_FALSE(e.computed);
  EXPECT_NE(e.reason_not_computed.find("too few distinct sizes"), std::string::npos);
}

TEST(CommunicationFits, GroupsCollectivesAndFitsFromAllPoints) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir);
  const nlohmann::json comm = fit_communication(load_results_dir(dir));
  ASSERT_EQ(comm["collectives"].size(), 4u);
  bool found = false;
  for (const auto& g : comm["collectives"]) {
    EXPECT_TRUE(g["alpha_beta"].contains("alpha_us")) << g.dump();
    EXPECT_TRUE(g["sigmoid"].contains("H_gbps")) << g["sigmoid"].dump();
    EXPECT_TRUE(g["piecewise"].contains("bw_max_gbps")) << g["piecewise"].dump();
    EXPECT_TRUE(g["alpha_beta"]["heldout"]["computed"].get<bool>());
    if (g["collective"] == "allreduce" && g["nranks"] == 4) {
      found = true;
      EXPECT_EQ(g["nnodes"], 1);
      EXPECT_EQ(g["spans_nodes"], 0);
      EXPECT_NEAR(g["bus_factor"].get<double>(), 1.5, 1e-12);
      EXPECT_NEAR(g["alpha_beta"]["alpha_us"].get<double>(), testing::kIntraAlphaUs, 0.5);
      EXPECT_NEAR(g["alpha_beta"]["beta_gbps"].get<double>(), testing::kIntraBetaGbps, 2.0);
      EXPECT_LT(g["alpha_beta"]["heldout"]["mape_pct"].get<double>(), 3.0);
    }
  }
  EXPECT_TRUE(found);
  ASSERT_FALSE(comm["p2p"].empty());
}

}  // namespace
}  // namespace gpucal::calibration
