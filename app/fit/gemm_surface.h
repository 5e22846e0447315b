// GEMM throughput between and beyond measured shapes: the model `gpucal predict` prices a GEMM of
// an unmeasured shape with, and the held-out scores `gpucal fit` reports for it beside two
// baselines (docs/fidelity.md, "GPU tables held out: XLA's H100 and B200 measurements").
//
// The surface: ln(TFLOP/s) as a local quadratic in log2 of (batch, m, n, k), fitted by weighted
// least squares around the asked shape (Gaussian weights, bandwidth kBandwidthOctaves in each
// coordinate; a local line, then a local mean, where too few shapes are near to fit more). A shape
// outside the measured range is asked at the nearest measured coordinates (throughput levels
// off beyond the table, as XLA's interpolators clamp too), and the estimate says by how many
// octaves it went outside. The estimate never leaves the measured throughputs' range.
//
// The baselines, on the same split: log-log interpolation in FLOP count (ln TFLOP/s as a straight
// line in ln FLOP between the kept shapes nearest below and above, what a size-throughput table
// gives), and XLA's rule (xla/service/gpu/model/interpolator.h, EuclideanWeightedAverageInterpolator
// as matmul_interpolator.cc builds it: the mean of the 16 corners of the power-of-two box around
// the shape, weighted 1/(squared distance + 1) in raw dimensions; held out, a measured shape's box
// is its neighbours at half and twice each dimension, and corners not kept are left out).
#pragma once

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpucal::calibration {

constexpr double kBandwidthOctaves = 1.25;

struct GemmSample {
  double batch = 1, m = 0, n = 0, k = 0;
  double tflops = 0;
};

struct GemmEstimate {
  double tflops = 0;
  double outside_octaves = 0;  // how far outside the measured range (0: inside), summed over coordinates
  std::string rule;            // "local quadratic of 87 shapes", "local line", "local mean", "the measured shape"
};

// The measured shapes of a calibration's compute.gemm.<dtype> table (its by_shape entries with
// positive m, n, k and TFLOP/s; batch 0 read as 1).
std::vector<GemmSample> gemm_samples_of(const nlohmann::json& gemm_table);

// Throws std::invalid_argument on an empty sample set or a non-positive shape.
GemmEstimate gemm_surface(const std::vector<GemmSample>& samples, double batch, double m, double n, double k);

// The baselines (see above); nullopt-like 0 when a rule has no kept neighbour.
double gemm_loglog_flops(const std::vector<GemmSample>& kept, double batch, double m, double n, double k);
double gemm_xla_rule(const std::vector<GemmSample>& kept, double batch, double m, double n, double k);

// Held-out scores of the surface and both baselines for one table: every 3rd shape in (batch, m,
// n, k) order, and where the table has 3 or more values of it, a whole middle k and a whole middle
// batch. {"splits": [{"split", "held_out", "surface": {"median_pct", "p90_pct", "max_pct"},
// "loglog_flops": {...}, "xla_rule": {...}}], "interval_half_width_pct": p90 of the every-3rd
// split}. Tables of fewer than 6 shapes get {"splits": []}.
nlohmann::json gemm_holdout_scores(const std::vector<GemmSample>& samples);

}  // namespace gpucal::calibration
