// Two-sided Mann–Whitney U test, normal approximation with tie and continuity correction:
// the test Google Benchmark's compare.py runs through scipy.stats.mannwhitneyu
// (alternative='two-sided', use_continuity=True, asymptotic method).
#pragma once
#include <vector>

namespace gpucal::calibration {

struct MannWhitneyResult {
  double u_statistic = 0;  // U of the first sample
  double z = 0;
  double p_value = 1;      // two-sided
};

// U1 = R1 - n1(n1+1)/2 (R1: rank sum of `a` in the pooled, mid-ranked sample);
// mu = n1 n2 / 2; sigma^2 = n1 n2 / 12 * ((n+1) - sum(t^3 - t) / (n(n-1))) over tie groups t;
// z = (|U1 - mu| - 0.5) / sigma; p = erfc(z / sqrt 2). Throws when a sample is empty.
MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace gpucal::calibration
