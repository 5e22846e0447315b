// The preemption detector (core/measure/preemption.h) on synthetic per-sample records: quiet
// points stay clean whatever their shape, spoiled ones are flagged with the sign that shows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/measure/preemption.h"

using namespace gpucal;

namespace {

const std::vector<double> kTicks = {10e-3, 4e-3, 1e-3};

// n samples of `work` seconds per launch with relative Gaussian jitter, deterministic.
std::vector<double> quiet(size_t n, double work, double jitter, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, jitter);
  std::vector<double> s;
  for (size_t i = 0; i < n; ++i) s.push_back(work * (1 + std::fabs(noise(rng))));
  return s;
}

std::string reason(const std::vector<double>& samples, int lps = 1,
                   std::vector<double> block_cpu_share = {}) {
  return preemption_reason({samples, lps, std::move(block_cpu_share)}, kTicks);
}

}  // namespace

TEST(Preemption, QuietPointsAreClean) {
  EXPECT_EQ(reason(quiet(200, 40e-6, 0.02)), "");  // a short kernel
  EXPECT_EQ(reason(quiet(50, 8e-3, 0.01)), "");    // a kernel of exactly two ticks
  EXPECT_EQ(reason(quiet(30, 0.2, 0.05)), "");     // a long, jittery one
  EXPECT_EQ(reason(quiet(200, 40e-6, 0.02), 2500, std::vector<double>(200, 0.98)),
            "");  // batched, on its CPU
}

TEST(Preemption, AFewPreemptedSamplesAreWhatTheMedianAbsorbs) {
  auto s = quiet(200, 1e-3, 0.01);
  for (size_t i = 0; i < 10; ++i) s[i * 20] += 4e-3;  // 5% of the samples lose one tick
  EXPECT_EQ(reason(s), "");
}

TEST(Preemption, WideContinuousNoiseIsNotTwoStates) {
  std::vector<double> s;
  for (int i = 0; i < 100; ++i) s.push_back(1e-3 * (1 + 0.02 * i));  // 1x .. 3x, no empty band
  EXPECT_EQ(reason(s), "");
}

TEST(Preemption, DelaysOfWholeTicksAreFlaggedWithTheTick) {
  auto s = quiet(100, 50e-6, 0.02);
  for (size_t i = 0; i < s.size(); i += 3) s[i] += 4e-3 * static_cast<double>(1 + i % 2);  // 34%
  const std::string r = reason(s);
  EXPECT_NE(r.find("of samples delayed by whole 4 ms scheduler ticks"), std::string::npos) << r;
  EXPECT_EQ(r.rfind("34%", 0), 0u) << r;
}

TEST(Preemption, TheIssuesMediansAtWholeTicksAreFlagged) {
  // bench_memory on a loaded machine: a 0.04 ms kernel whose samples read 8000, 16000 and
  // 24000 us (the OpenMP team waited for a thread switched out for whole ticks).
  std::vector<double> s;
  for (int i = 0; i < 30; ++i) s.push_back((i % 3 + 1) * 8e-3 + 40e-6);
  const std::string r = reason(s);
  EXPECT_NE(r.find("4 ms scheduler ticks"), std::string::npos) << r;
}

TEST(Preemption, TickDelaysAreMeasuredPerBlock) {
  // 100 launches per sample: a 4 ms tick adds 40 us to the per-launch time.
  auto s = quiet(60, 20e-6, 0.01);
  for (size_t i = 0; i < s.size(); i += 2) s[i] += 4e-3 / 100;
  EXPECT_NE(reason(s, 100).find("4 ms scheduler ticks"), std::string::npos);
  EXPECT_EQ(reason(s, 1).find("scheduler ticks"), std::string::npos);  // 40 us is no tick per launch
}

TEST(Preemption, DelaysOffTheGridAreNotTicks) {
  auto s = quiet(100, 50e-6, 0.01);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> any(0.6e-3, 9e-3);
  for (size_t i = 0; i < s.size(); i += 3) s[i] += any(rng);
  EXPECT_EQ(reason(s).find("scheduler ticks"), std::string::npos) << reason(s);
}

TEST(Preemption, TwoStatesWithTheMedianInTheSlowOneAreFlagged) {
  auto s = quiet(30, 180e-6, 0.03, 1);  // fast state: 30%
  const auto slow = quiet(70, 450e-6, 0.03, 2);
  s.insert(s.end(), slow.begin(), slow.end());
  const std::string r = reason(s);
  EXPECT_NE(r.find("x the minimum, two states (30% of samples near the minimum)"), std::string::npos) << r;
}

TEST(Preemption, ThreadOffItsCpuInManyBlocksIsFlagged) {
  const auto s = quiet(100, 1e-3, 0.01);
  std::vector<double> shares(100, 0.99);
  for (size_t i = 0; i < 30; ++i) shares[i * 3] = 0.3;
  EXPECT_EQ(reason(s, 1, shares),
            "the measuring thread was off its CPU for over half of 30% of its timed blocks");
  // One long preemption (a block at 2% of its wall time) is one block, not the point.
  std::vector<double> one(100, 0.99);
  one[7] = 0.02;
  EXPECT_EQ(reason(s, 1, one), "");
  EXPECT_EQ(reason(quiet(5, 1e-3, 0.01), 1, std::vector<double>(5, 0.1)), "");  // too few blocks to judge
}

TEST(Preemption, TooFewSamplesJudgeNoDistribution) {
  EXPECT_EQ(reason({1e-3, 9e-3, 1e-3, 9e-3, 5e-3}), "");
}

TEST(Preemption, CandidateTicksAreCoarsestFirstAndIncludeTheKernels) {
  const auto ticks = candidate_ticks();
  ASSERT_GE(ticks.size(), 3u);
  for (size_t i = 1; i < ticks.size(); ++i) EXPECT_GT(ticks[i - 1], ticks[i]);
  const double hz_tick = kernel_tick_seconds();
  if (hz_tick > 0) EXPECT_NE(std::find(ticks.begin(), ticks.end(), hz_tick), ticks.end());
  EXPECT_GT(thread_cpu_seconds(), 0);
}
