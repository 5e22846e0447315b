// Regime-aware piecewise α–β: NCCL/RCCL switch protocol (LL, LL128, Simple) and algorithm
// (tree, ring, NVLS, CollNet) with the message size, so a collective's time is a different
// α–β line per regime:   t_us = alpha_i + B / (beta_i * 1e3)   for B in regime i,
// B = S * bus_factor (bus bytes, as in fit.h). Where the regimes' breakpoints come from:
//  - the nccl_algo/nccl_proto of the rows when every row has one (a run with
//    --nccl-tuning-log): a new regime wherever the choice changes;
//  - otherwise segmented regression: an exact dynamic program over the sorted distinct sizes
//    picks, for each number of regimes K, the segmentation with the least squared relative
//    error (each regime >= 2 sizes, its α >= 0 and β > 0 or a flat α), and K minimises
//    BIC = m ln((SSE + m σ²)/m) + (3K - 1) ln m (m sizes; σ = 1%, the noise a published table
//    carries, keeps exact fits from buying regimes for free).
// Between the last size of one regime and the first of the next: when the two lines cross inside
// that gap, the model switches there (continuous; the faster line on each side, as NCCL's tuner
// chooses). Otherwise the measurements step up or down somewhere in the gap and where is not
// measured; the gap rule says how the model crosses it:
//   bridge  a straight line in ln t against ln B between the two regimes' values at the gap's
//           ends (continuous);
//   lower   the lower of the two lines (a step up happens at the gap's end, a step down at its
//           start: the behaviour of a tuner that picks the faster protocol);
//   upper   the higher of the two (the slower protocol is kept as long as possible, as MPI's
//           eager limits do).
// The rule is chosen per fit by leave-one-out over the fitted sizes (each fold re-segments
// without its size, so the left-out size lands in a gap exactly as an unmeasured size would);
// ties keep `bridge`. Every line has alpha >= 0 and beta > 0 (or is flat), so time never falls
// with size except across a gap where the measurements themselves fall (marked `decreasing`).
// Duplicate measurements at a size (out-of-place and in-place, repeated cycles) enter as their
// minimum: interference only ever slows a collective down.
#pragma once

#include <string>
#include <vector>

#include "app/fit/fit.h"

namespace gpucal::calibration {

struct RegimeSegment {
  double from_bus_bytes = 0, to_bus_bytes = 0;  // first and last measured bus bytes of the regime
  double alpha_us = 0;
  double us_per_bus_byte = 0;  // 1 / (beta_gbps * 1e3); 0 for a flat (latency-only) regime
  int sizes = 0;               // distinct sizes fitted
  std::string label;           // "RING/LL" when the breakpoints came from nccl_algo/nccl_proto
  double time_us(double bus_bytes) const { return alpha_us + bus_bytes * us_per_bus_byte; }
};

struct RegimeGap {
  double from_bus_bytes = 0, to_bus_bytes = 0;
  bool intersection = false;    // true: switch where the lines cross; false: the params' gap_rule
  double switch_bus_bytes = 0;  // the crossing (intersection only)
  bool decreasing = false;      // the model falls somewhere in this gap (regime_gap_falls)
};

struct RegimeParams {
  std::vector<RegimeSegment> segments;
  std::vector<RegimeGap> gaps;      // gaps[i] lies between segments[i] and segments[i + 1]
  std::string breakpoints_from;     // "segmented regression (BIC)" or "nccl_algo/nccl_proto"
  std::string gap_rule = "bridge";  // bridge, lower, upper
  std::vector<std::pair<std::string, double>> gap_rule_loo_mape_pct;  // each rule's leave-one-out MAPE
  double sse = 0;  // squared relative error of the chosen segmentation
};

const std::vector<std::string>& regime_gap_rules();  // bridge, lower, upper

// Whether the model falls with size somewhere in gap `i` under the params' gap rule: never at an
// intersection; for bridge when the right regime's first value is below the left's last; for
// lower and upper when the right line lies below the left one across the gap (the right regime
// is the faster one: a step down in the measurements).
bool regime_gap_falls(const RegimeParams& p, std::size_t i);

double predict_time_us(const RegimeParams& p, double size_bytes, double bus_factor);

// Breakpoints from the points' labels when every point has one. Throws std::invalid_argument
// with fewer than kRegimeMinSizes distinct sizes.
RegimeParams fit_regime(const std::vector<SizeTimePoint>& points, double bus_factor);

constexpr int kRegimeMinSizes = 3;
constexpr double kRegimeNoiseRel = 0.01;  // σ of the BIC penalty above
constexpr int kRegimeMaxSegments = 8;

}  // namespace gpucal::calibration
