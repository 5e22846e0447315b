// Robust location and spread across a fleet: the median and the median absolute deviation
// (MAD), and the robust z = (x - median) / (1.4826 * MAD). 1.4826 makes the MAD estimate the
// standard deviation of normally distributed values, so |z| reads like an ordinary z-score
// while one or two broken nodes cannot move the reference (docs/field-reference.md, "What
// operators use to find bad nodes").
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
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

// The robust reference of `values`, one that can rank them: where half of them or more tie, the
// MAD is 0 and any other figure would score an infinite z (a node's best pair counts for both its
// ends, so three nodes' capacities always tie): the mean absolute deviation from the median stands
// in, times 1.2533 (its factor to a normal sigma: the modified z-score's fallback, Iglewicz and
// Hoaglin). With three figures the odd one then scores at most -2.4, so only the gross factor
// names it: three nodes cannot rank one.
std::optional<RobustReference> tied_robust_reference(const std::vector<double>& values);

// (x - median) / sigma; +-infinity when sigma is 0 and x differs from the median, 0 when equal.
double robust_z(double x, const RobustReference& reference);

// The z a normal deviate must pass for noise alone to pass it `expected_false` times in
// expectation over `tests` tests (Bonferroni), at least `floor`: the tail beyond z, one side or
// both (`two_sided`), is expected_false / tests. Solved by bisection up to max(floor, 12).
double multiple_test_z(double expected_false, std::size_t tests, bool two_sided, double floor);

// Each node's share of the figures between pairs of nodes: log(value of pair a--b) is taken as
// overall + effect(a) + effect(b) + noise, fitted by median polish (Tukey): each node's effect moves
// by the median of its pairs' residuals until they settle. A node with a slow port slows all its
// pairs and takes their whole drop as its effect; one slow pair, or one lucky one, moves its
// nodes' medians little. Returns exp(overall + effect): the node's typical pair with a typical peer,
// in the values' unit. Values must be positive; a node in no pair is absent.
std::map<std::string, double> typical_pair_of_nodes(
    const std::vector<std::tuple<std::string, std::string, double>>& pairs);

}  // namespace gpucal::fleet
