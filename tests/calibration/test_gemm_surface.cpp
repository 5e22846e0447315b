// The GEMM surface predict prices unmeasured shapes with, its two baselines and the held-out
// scores fit reports (app/fit/gemm_surface.h), on synthetic tables whose answer is known.
#include <gtest/gtest.h>

#include <cmath>

#include "app/fit/gemm_surface.h"

namespace gpucal::calibration {
namespace {

// ln TFLOP/s quadratic in log2 of the dimensions: what the local quadratic can represent exactly.
double smooth(double b, double m, double n, double k) {
  const double x = std::log2(b), y = std::log2(m), z = std::log2(n), w = std::log2(k);
  return std::exp(1.0 + 0.3 * y + 0.2 * z + 0.25 * w + 0.1 * x - 0.012 * y * y - 0.01 * z * w - 0.008 * w * w);
}

std::vector<GemmSample> grid(double (*f)(double, double, double, double)) {
  std::vector<GemmSample> out;
  for (double b : {1.0, 2.0, 4.0})
    for (double m = 256; m <= 4096; m *= 2)
      for (double n = 256; n <= 4096; n *= 2)
        for (double k = 256; k <= 4096; k *= 2) out.push_back({b, m, n, k, f(b, m, n, k)});
  return out;
}

TEST(GemmSurface, AMeasuredShapeIsItsOwnFigure) {
  const auto samples = grid(smooth);
  const GemmEstimate e = gemm_surface(samples, 2, 1024, 512, 2048);
  EXPECT_DOUBLE_EQ(e.tflops, smooth(2, 1024, 512, 2048));
  EXPECT_EQ(e.rule, "the measured shape");
  EXPECT_EQ(e.outside_octaves, 0);
}

TEST(GemmSurface, BetweenShapesALocalQuadraticInLogSpaceIsExactOnAQuadraticSurface) {
  const auto samples = grid(smooth);
  for (const auto& [b, m, n, k] : std::vector<std::array<double, 4>>{
           {1, 384, 3000, 700}, {3, 1500, 300, 2500}, {2, 5000 / 2.0, 1234, 999}}) {
    const GemmEstimate e = gemm_surface(samples, b, m, n, k);
    EXPECT_NEAR(e.tflops / smooth(b, m, n, k), 1.0, 0.002) << m << "x" << n << "x" << k;
    EXPECT_NE(e.rule.find("local quadratic"), std::string::npos) << e.rule;
  }
}

TEST(GemmSurface, OutsideTheTableItLevelsOffAndSaysHowFar) {
  const auto samples = grid(smooth);
  const GemmEstimate e = gemm_surface(samples, 1, 16384, 4096, 256);  // m two octaves above 4096
  EXPECT_DOUBLE_EQ(e.outside_octaves, 2.0);
  EXPECT_DOUBLE_EQ(e.tflops, smooth(1, 4096, 4096, 256));  // asked at the nearest measured shape
  const GemmEstimate below = gemm_surface(samples, 1, 64, 64, 256);
  EXPECT_DOUBLE_EQ(below.outside_octaves, 4.0);
}

TEST(GemmSurface, FewShapesFallBackToALineOrAMeanAndStayInTheMeasuredRange) {
  const std::vector<GemmSample> two{{1, 128, 128, 128, 1.0}, {1, 512, 512, 512, 3.0}};
  const GemmEstimate e = gemm_surface(two, 1, 256, 256, 256);
  EXPECT_NE(e.rule.find("local mean"), std::string::npos) << e.rule;
  EXPECT_GE(e.tflops, 1.0);
  EXPECT_LE(e.tflops, 3.0);
  EXPECT_THROW(gemm_surface({}, 1, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(gemm_surface(two, 1, 0, 1, 1), std::invalid_argument);
}

TEST(GemmBaselines, LogLogInFlopsAndXlasWeightedCorners) {
  const std::vector<GemmSample> line{{1, 256, 256, 256, 10.0}, {1, 1024, 1024, 1024, 40.0}};
  // Halfway in ln FLOP between the two: the geometric mean.
  EXPECT_NEAR(gemm_loglog_flops(line, 1, 512, 512, 512), 20.0, 1e-9);
  EXPECT_NEAR(gemm_loglog_flops(line, 1, 4096, 4096, 4096), 40.0, 1e-9);  // flat beyond
  // XLA's rule: corners at half and twice, weights 1 / (squared distance in raw dimensions + 1).
  const std::vector<GemmSample> corners{{1, 256, 512, 512, 10.0}, {1, 1024, 512, 512, 30.0}};
  const double w_low = 1.0 / (256.0 * 256.0 + 1), w_high = 1.0 / (512.0 * 512.0 + 1);
  EXPECT_NEAR(gemm_xla_rule(corners, 1, 512, 512, 512), (10 * w_low + 30 * w_high) / (w_low + w_high), 1e-9);
  // Corners are clamped to the table's range (as XLA clamps); here none of the four is kept.
  const std::vector<GemmSample> diagonal{{1, 256, 256, 512, 10.0}, {1, 1024, 1024, 512, 30.0}};
  EXPECT_EQ(gemm_xla_rule(diagonal, 1, 256, 1024, 512), 0.0);
}

TEST(GemmHoldout, ScoresEverySplitForTheSurfaceAndBothBaselines) {
  const nlohmann::json scores = gemm_holdout_scores(grid(smooth));
  ASSERT_EQ(scores["splits"].size(), 3u);
  EXPECT_EQ(scores["splits"][0]["split"], "every 3rd shape");
  EXPECT_EQ(scores["splits"][0]["held_out"], 125);
  EXPECT_EQ(scores["splits"][1]["split"], "every shape of k = 1024");
  EXPECT_EQ(scores["splits"][2]["split"], "every shape of batch = 2");
  for (const auto& s : scores["splits"]) {
    EXPECT_LT(s["surface"]["median_pct"].get<double>(), 0.5) << s.dump();
    EXPECT_GT(s["loglog_flops"]["median_pct"].get<double>(), s["surface"]["median_pct"].get<double>());
    EXPECT_GT(s["xla_rule"]["median_pct"].get<double>(), s["surface"]["median_pct"].get<double>());
  }
  EXPECT_TRUE(scores.contains("interval_half_width_pct"));
  EXPECT_TRUE(gemm_holdout_scores({{1, 256, 256, 256, 1.0}})["splits"].empty());
}

}  // namespace
}  // namespace gpucal::calibration
