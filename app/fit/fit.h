// Communication model forms and their least-squares fits. The one place where the
// formulas live; each predicts time_us for a message of `size_bytes` (nccl-tests S).
//
// Every form works on bus bytes B = S * bus_factor (nccl-tests factor: allreduce 2(n-1)/n,
// allgather/reduce-scatter/alltoall (n-1)/n, others 1; p2p 1), so bandwidths are bus GB/s
// (GB = 1e9 B) and comparable with the busbw_gbps column. 1 GB/s moves 1e3 B per µs, hence
// the 1e3 in every "bytes / (gbps * 1e3)" below.
//
// Residuals are relative ((model - measured) / measured): sizes span many decades and a
// plain least-squares fit would let the largest messages decide everything.
#pragma once
#include <string>
#include <vector>

namespace gpucal::calibration {

struct SizeTimePoint {
  double size_bytes = 0;  // S as in the CSV's size_bytes
  double time_us = 0;     // time_us_median
  std::string label;      // the row's "nccl_algo/nccl_proto" when known (fit_regime.h), else ""
};

// α–β (Hockney): t_us = alpha_us + B / (beta_gbps * 1e3).
// Linear in (alpha, 1/beta): weighted linear least squares; if the free fit gives alpha < 0
// (possible when the smallest sizes are not latency bound), alpha is fixed at 0 and beta refit.
struct AlphaBetaParams {
  double alpha_us = 0;
  double beta_gbps = 0;  // bus bandwidth
};
double predict_time_us(const AlphaBetaParams& p, double size_bytes, double bus_factor);
AlphaBetaParams fit_alpha_beta(const std::vector<SizeTimePoint>& points, double bus_factor);

// Sigmoid of bus bandwidth against log2(S) (NERSC transformer-perf-estimates form):
//   busbw_gbps(S) = H / (1 + exp(-k (log2 S - x0))) + y0;   t_us = B / (busbw_gbps * 1e3).
// Fitted with Eigen's Levenberg–Marquardt on relative time residuals, multi-start over x0 at the
// multistart_log2_sizes(); reported with k > 0 ((H, k, x0, y0) and (-H, -k, x0, y0 + H) are the
// same curve).
struct SigmoidParams {
  double height_gbps = 0;          // H
  double steepness = 0;            // k, per log2(byte)
  double midpoint_log2_bytes = 0;  // x0
  double offset_gbps = 0;          // y0
};
double sigmoid_busbw_gbps(const SigmoidParams& p, double size_bytes);
double predict_time_us(const SigmoidParams& p, double size_bytes, double bus_factor);
SigmoidParams fit_sigmoid(const std::vector<SizeTimePoint>& points, double bus_factor);

// Piecewise: latency floor, knee, saturation. With x = log2 B and
//   t_floor(B) = floor_us                                  (B <= knee)
//   t_sat(B)   = overhead_us + B / (bw_max_gbps * 1e3)     (B >= sat)
// between knee and sat, log t moves from the floor to the saturation line along a smoothstep
// w(u) = 3u^2 - 2u^3, u = (x - log2 knee) / (log2 sat - log2 knee):
//   t(B) = t_floor^(1-w) * t_sat(B)^w
// so the curve (a sigmoid in log-log space) is continuous with a continuous slope at both ends.
// Knee and saturation are in BUS bytes. Fitted with Eigen LM on relative time residuals,
// multi-start over every (knee, sat) pair of the multistart_log2_sizes().
struct PiecewiseParams {
  double floor_us = 0;
  double knee_bus_bytes = 0;
  double sat_bus_bytes = 0;
  double bw_max_gbps = 0;  // bus bandwidth at saturation
  double overhead_us = 0;
};
double predict_time_us(const PiecewiseParams& p, double size_bytes, double bus_factor);
PiecewiseParams fit_piecewise(const std::vector<SizeTimePoint>& points, double bus_factor);

// The log2 bus sizes the nonlinear fits start from: every distinct size, or kMultistartSizes of
// them evenly spaced by rank (both ends kept) when there are more. Every fit, including each
// cross-validation refit, runs the whole multi-start (a refit started from the all-points fit
// would remember the left-out size); the cap keeps that affordable (piecewise tries every pair:
// 28 starts instead of 496 on a 32-size sweep).
std::vector<double> multistart_log2_sizes(const std::vector<SizeTimePoint>& points, double bus_factor);
constexpr int kMultistartSizes = 8;

// Minimum distinct sizes each fit needs (parameters + 1, so the fit is over-determined).
constexpr int kAlphaBetaMinSizes = 3;
constexpr int kSigmoidMinSizes = 5;
constexpr int kPiecewiseMinSizes = 6;

}  // namespace gpucal::calibration
