#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/measure/stats.h"

using gpucal::percentile_sorted;
using gpucal::summarize;

TEST(Stats, PercentilesInterpolateLinearly) {
  std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.5), 6);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.1), 2);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.9), 10);
  std::vector<double> w = {10, 20};
  EXPECT_DOUBLE_EQ(percentile_sorted(w, 0.25), 12.5);
  EXPECT_THROW(percentile_sorted({}, 0.5), std::invalid_argument);
}

TEST(Stats, SummaryOfKnownSample) {
  auto s = summarize({5, 1, 4, 2, 3});  // unsorted on purpose
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_NEAR(s.stdev, 1.5811388300841898, 1e-12);  // sample stdev of 1..5
  EXPECT_DOUBLE_EQ(s.p10, 1.4);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  // IQR = 4 - 2 = 2; sigma = 2/1.349; se = 1.2533 sigma / sqrt(5); relative to 3.
  EXPECT_NEAR(s.median_rel_se, 1.2533 * (2 / 1.349) / std::sqrt(5.0) / 3, 1e-12);
}

TEST(Stats, OutlierDoesNotMoveMedianNoise) {
  std::vector<double> clean(50, 1.0), dirty(50, 1.0);
  for (int i = 0; i < 50; ++i) clean[i] = dirty[i] = 1.0 + 0.001 * (i % 5);
  dirty[7] = 100.0;  // one preempted sample
  auto a = summarize(clean), b = summarize(dirty);
  EXPECT_NEAR(a.median, b.median, 1e-12);
  EXPECT_LT(b.median_rel_se, 0.01);
  EXPECT_GT(b.stdev, 10 * a.stdev);
}

TEST(Stats, EmptyAndSingle) {
  EXPECT_EQ(summarize({}).count, 0);
  auto s = summarize({2.5});
  EXPECT_EQ(s.count, 1);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.stdev, 0);
  EXPECT_DOUBLE_EQ(s.median_rel_se, 0);
}

TEST(Stats, SelectionAgreesWithSorting) {
  std::vector<double> v;
  for (int i = 0; i < 101; ++i) v.push_back(std::fmod(i * 37.0, 101.0) + 0.5 * (i % 3));
  auto sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (double q : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0}) {
    auto scratch = v;
    EXPECT_DOUBLE_EQ(gpucal::percentile_select(scratch, q), percentile_sorted(sorted, q)) << q;
  }
  EXPECT_DOUBLE_EQ(gpucal::median_rel_se(v), summarize(v).median_rel_se);
  EXPECT_DOUBLE_EQ(gpucal::median_rel_se({3.0}), 0.0);
  std::vector<double> empty;
  EXPECT_THROW(gpucal::percentile_select(empty, 0.5), std::invalid_argument);
}
