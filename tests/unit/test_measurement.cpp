#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness/backend.h"
#include "harness/measurement.h"

using namespace gpucal;

namespace {
void spin_for(double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}
}  // namespace

TEST(Measurement, StableWorkConvergesWithEnoughSamples) {
  auto host = make_backend("host");
  MeasureConfig c;
  c.cold = false;
  c.noise_target = 0.05;  // loose: CI machines are shared
  c.max_time_s = 2.0;
  c.warmup_time_s = 0.01;
  int launches = 0;
  Measurement m = measure(*host, c, [&] {
    ++launches;
    spin_for(200e-6);
  });
  EXPECT_GE(m.seconds.count, c.min_samples);
  EXPECT_EQ(static_cast<size_t>(m.seconds.count), m.sample_seconds.size());
  EXPECT_GT(m.seconds.median, 150e-6);
  EXPECT_LT(m.seconds.min, m.seconds.p90 + 1e-12);
  EXPECT_GT(launches, m.seconds.count);  // warm-up launches are not samples
  EXPECT_EQ(m.launches_per_sample, 1);   // 200 us > 20 us: no batching needed
}

TEST(Measurement, ShortWorkIsBatchedInHotRegime) {
  auto host = make_backend("host");
  MeasureConfig c;
  c.cold = false;
  c.max_time_s = 0.2;
  c.warmup_time_s = 0.01;
  Measurement m = measure(*host, c, [] { spin_for(2e-6); });
  EXPECT_GT(m.launches_per_sample, 1);
  EXPECT_NEAR(m.seconds.median, 2e-6, 2e-6);  // per launch, not per batch
}

TEST(Measurement, TimeCapStopsNoisyWork) {
  auto host = make_backend("host");
  MeasureConfig c;
  c.cold = true;
  c.noise_target = 0.0;  // never satisfied
  c.max_time_s = 0.1;
  c.warmup_time_s = 0.0;
  int i = 0;
  Measurement m = measure(*host, c, [&] { spin_for((++i % 3 + 1) * 50e-6); });
  EXPECT_FALSE(m.converged);
  EXPECT_LT(m.wall_seconds, 1.0);
  EXPECT_GE(m.seconds.count, 1);
}

TEST(Measurement, AgreementAndCombinerAreConsultedEverySample) {
  auto host = make_backend("host");
  MeasureConfig c;
  c.cold = false;
  c.warmup_time_s = 0;
  c.max_time_s = 10;
  c.max_samples = 5;
  int votes = 0;
  // The partner holds the warm-up back for 3 votes, then follows the local decision.
  auto agree = [&](bool local) { return ++votes >= 3 ? local : false; };
  auto doubled = [](double s) { return 2 * s; };  // e.g. a slower rank
  Measurement m = measure(*host, c, [] { spin_for(50e-6); }, agree, doubled);
  EXPECT_EQ(m.seconds.count, 5);  // max_samples reached, agreed at once
  EXPECT_EQ(votes, 3 + 5);        // one vote per warm-up launch and per sample
  EXPECT_GT(m.seconds.median, 95e-6);  // the combined (doubled) time is what is recorded
}
