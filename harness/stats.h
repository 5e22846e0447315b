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

}  // namespace gpucal
