#include <gtest/gtest.h>

#include <cmath>

#include "app/history/robust_stats.h"

namespace gpucal::fleet {
namespace {

TEST(RobustStats, MedianAndMad) {
  EXPECT_FALSE(median({}).has_value());
  EXPECT_DOUBLE_EQ(*median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(*median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(*median_absolute_deviation({1, 2, 3, 4, 100}), 1);  // |x - 3|: 2 1 0 1 97
}

TEST(RobustStats, OneBrokenNodeDoesNotMoveTheReference) {
  const auto healthy = robust_reference({100, 101, 99, 100.5, 99.5});
  const auto with_bad = robust_reference({100, 101, 99, 100.5, 10});
  ASSERT_TRUE(healthy && with_bad);
  EXPECT_NEAR(with_bad->median, 100, 0.6);
  EXPECT_NEAR(with_bad->sigma, kMadToSigma * 0.75, 0.5);
  EXPECT_LT(robust_z(10, *with_bad), -50);
  EXPECT_NEAR(robust_z(101, *with_bad), 1.0 / (kMadToSigma * with_bad->mad), 1e-9);
}

TEST(RobustStats, ZeroSpreadGivesInfiniteZOnlyForDifferentValues) {
  const auto r = robust_reference({5, 5, 5, 7});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->mad, 0);
  EXPECT_EQ(robust_z(5, *r), 0);
  EXPECT_TRUE(std::isinf(robust_z(4, *r)) && robust_z(4, *r) < 0);
}

}  // namespace
}  // namespace gpucal::fleet

// The thresholds the docs quote: history regressions' k (two-sided, 0.05 a night) and the
// report's outlier z (one-sided, 0.05 a report), each at least its floor.
TEST(MultipleTestZ, GrowsWithTheTestsAndKeepsItsFloor) {
  EXPECT_NEAR(gpucal::fleet::multiple_test_z(0.05, 35, true, 3), 3.19, 0.01);
  EXPECT_NEAR(gpucal::fleet::multiple_test_z(0.05, 10000, true, 3), 4.56, 0.01);
  EXPECT_NEAR(gpucal::fleet::multiple_test_z(0.05, 7000, false, 3.5), 4.34, 0.01);
  EXPECT_EQ(gpucal::fleet::multiple_test_z(0.05, 5, true, 3), 3);
  EXPECT_EQ(gpucal::fleet::multiple_test_z(0.05, 200, false, 3.5), 3.5);
}

// Median polish of a pair matrix: six nodes whose pairs are 40 GB/s times a node factor each end
// (node c at a quarter), one pair (a--b) at a fifth of that besides. Each node's typical pair comes
// back as 40 x its own factor (c: 10), and the one slow pair moves neither a nor b.
TEST(TypicalPairOfNodes, GivesEachNodeItsShareAndShrugsOffOnePair) {
  const std::map<std::string, double> factor{{"a", 1.0}, {"b", 1.02}, {"c", 0.25}, {"d", 0.98}, {"e", 1.0}, {"f", 1.01}};
  std::vector<std::tuple<std::string, std::string, double>> pairs;
  for (auto x = factor.begin(); x != factor.end(); ++x)
    for (auto y = std::next(x); y != factor.end(); ++y) {
      const double slow = x->first == "a" && y->first == "b" ? 0.2 : 1.0;
      pairs.emplace_back(x->first, y->first, 40.0 * x->second * y->second * slow);
    }
  const auto typical = gpucal::fleet::typical_pair_of_nodes(pairs);
  ASSERT_EQ(typical.size(), 6u);
  const double reference = typical.at("e");  // a factor-1 node
  EXPECT_NEAR(typical.at("c") / reference, 0.25, 0.01);
  EXPECT_NEAR(typical.at("a") / reference, 1.0, 0.03);
  EXPECT_NEAR(typical.at("b") / reference, 1.02, 0.03);
  EXPECT_NEAR(reference, 40.0, 1.5);
  // A pair without a positive figure is left out; a node in no other pair is absent.
  pairs.emplace_back("g", "a", 0.0);
  EXPECT_EQ(gpucal::fleet::typical_pair_of_nodes(pairs).count("g"), 0u);
}
