// Robust location and spread across a fleet: the median and the median absolute deviation
// (MAD), and the robust z = (x - median) / (1.4826 * MAD). 1.4826 makes the MAD estimate the
// standard deviation of normally distributed values, so |z| reads like an ordinary z-score
// while one or two broken nodes cannot move the reference (docs/field-reference.md, "What
// operators use to find bad nodes").
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

namespace gpucal::fleet {

constexpr double kMadToSigma = 1.4826;
constexpr double kMeanAbsToSigma = 1.2533;  // sqrt(pi / 2): mean absolute deviation to sigma (normal)

// Median of `values` (mean of the middle two for an even count); nullopt when empty.
std::optional<double> median(std::vector<double> values);

// Median of |x - median|; nullopt when empty.
std::optional<double> median_absolute_deviation(const std::vector<double>& values);

struct RobustReference {
  double median = 0;
  double mad = 0;     // 0 when at least half the values are equal
  double sigma = 0;   // kMadToSigma * mad
  int count = 0;
};

// nullopt when `values` is empty.
std::optional<RobustReference> robust_reference(const std::vector<double>& values);

// (x - median) / sigma; +-infinity when sigma is 0 and x differs from the median, 0 when equal.
double robust_z(double x, const RobustReference& reference);

// The z a normal deviate must pass for noise alone to pass it `expected_false` times in
// expectation over `tests` tests (Bonferroni), at least `floor`: the tail beyond z, one side or
// both (`two_sided`), is expected_false / tests. Solved by bisection up to max(floor, 12).
double multiple_test_z(double expected_false, std::size_t tests, bool two_sided, double floor);

}  // namespace gpucal::fleet
