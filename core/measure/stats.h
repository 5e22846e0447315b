// Robust summary of a sample of times (or any positive quantity).
#pragma once

#include <vector>

namespace gpucal {

struct Summary {
  int count = 0;
  double median = 0, p10 = 0, p90 = 0, min = 0, max = 0, mean = 0, stdev = 0;
  // Standard error of the median relative to it: 1.2533 * sigma / sqrt(n) / median, with
  // sigma estimated robustly from the interquartile range (IQR / 1.349) so a few
  // preempted samples do not hold a converged measurement hostage.
  double median_rel_se = 0;
};

// Percentile by linear interpolation between order statistics (q in [0, 1]; the
// "type 7" definition of R and NumPy). `sorted` must be ascending and non-empty.
double percentile_sorted(const std::vector<double>& sorted, double q);
Summary summarize(std::vector<double> samples);

// The same percentile of an unsorted sample by selection (O(n), reorders `samples`): what
// the sampling loop uses while samples arrive, so checking the noise never re-sorts.
double percentile_select(std::vector<double>& samples, double q);
// Summary::median_rel_se of `samples` in O(n) (selection, no sort); 0 below 2 samples.
double median_rel_se(std::vector<double> samples);

}  // namespace gpucal
