#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/measure/measurement.h"
#include "core/world/team.h"
#include "core/world/thread_world.h"

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

// A host backend for timing properties that must hold however loaded the machine is. With
// `virtual_clock` its timer reads a clock that only advance() moves (the launches advance
// it), so batch sizing and per-launch division are checked on exact times; the wall-clock
// parts of measure() (warm-up length, the cap) still run on the real clock. The first
// flush can be made to cost what allocating and filling a large flush buffer costs.
class ScriptedBackend : public Backend {
 public:
  ScriptedBackend(bool virtual_clock, double first_flush_s = 0)
      : inner_(make_backend("host")), virtual_clock_(virtual_clock), first_flush_s_(first_flush_s) {}
  void advance(double seconds) { now_s_ += seconds; }
  const DeviceInfo& info() const override { return inner_->info(); }
  void release(void* p, MemKind k) override { inner_->release(p, k); }
  void* stream() override { return nullptr; }
  void synchronize() override {}
  std::unique_ptr<DeviceTimer> make_timer() override {
    if (!virtual_clock_) return inner_->make_timer();
    return std::make_unique<Timer>(now_s_);
  }
  void copy(void* d, const void* s, size_t n) override { inner_->copy(d, s, n); }
  void fill_random(void* d, size_t n, DType t, uint64_t seed, double lo, double hi) override {
    inner_->fill_random(d, n, t, seed, lo, hi);
  }
  void fill_constant(void* d, size_t n, DType t, double v) override { inner_->fill_constant(d, n, t, v); }
  void flush_cache() override {
    if (flushes_++ == 0) spin_for(first_flush_s_);
  }

 protected:
  void* raw_allocate(size_t, MemKind) override { return nullptr; }

 private:
  struct Timer : DeviceTimer {
    explicit Timer(const double& clock) : clock_(clock) {}
    void start() override { start_ = clock_; }
    void stop() override { stop_ = clock_; }
    double elapsed_seconds() override { return stop_ - start_; }
    const double& clock_;
    double start_ = 0, stop_ = 0;
  };
  std::unique_ptr<Backend> inner_;
  bool virtual_clock_;
  double first_flush_s_;
  double now_s_ = 0;
  int flushes_ = 0;
};

TEST(Measurement, ShortWorkIsBatchedInHotRegime) {
  ScriptedBackend backend(/*virtual_clock=*/true);
  MeasureConfig c;
  c.cold = false;
  c.max_time_s = 10;  // never reached: identical samples meet the noise target at once
  c.warmup_time_s = 0.01;
  Measurement m = measure(backend, c, [&] { backend.advance(2e-6); });
  // Blocks of ceil(100 us / 2 us) launches; the row's times are per launch, not per block.
  EXPECT_NEAR(m.launches_per_sample, 50, 1);
  EXPECT_NEAR(m.seconds.median, 2e-6, 1e-12);
  EXPECT_NEAR(m.seconds.max, 2e-6, 1e-12);
  EXPECT_EQ(m.stop_reason, StopReason::noise_target);
}

TEST(Measurement, TimeCapStopsNoisyWork) {
  auto host = make_backend("host");
  MeasureConfig c;
  c.cold = true;
  c.noise_target = -1;  // never met: only the cap can stop sampling
  c.min_samples = 1;    // so the cap, not --min-samples, ends it even on a loaded machine
  c.max_time_s = 0.1;
  c.warmup_time_s = 0.0;
  using clock = std::chrono::steady_clock;
  std::vector<clock::time_point> starts, ends;
  int i = 0;
  Measurement m = measure(*host, c, [&] {
    starts.push_back(clock::now());
    spin_for((++i % 3 + 1) * 50e-6);
    ends.push_back(clock::now());
  });
  EXPECT_FALSE(m.converged);
  EXPECT_EQ(m.stop_reason, StopReason::time_cap);
  // Launches: one untimed first launch, one warm-up round of one (no warm-up time), then
  // one launch per sample (cold).
  ASSERT_EQ(static_cast<size_t>(m.seconds.count) + 2, starts.size());
  EXPECT_GE(m.sampling_seconds, c.max_time_s);  // not stopped before the cap
  // ...and at the first sample past it, however loaded the machine: every sample but the
  // last ended before the cap (the cap starts before the first sample's launch).
  if (m.seconds.count >= 2) {
    const double before_last = std::chrono::duration<double>(ends[ends.size() - 2] - starts[2]).count();
    EXPECT_LT(before_last, c.max_time_s);
  }
}

// A team whose partner is scripted; records every call in order, with the launches, so
// a test can see where coordination happens relative to the timed blocks.
struct ScriptedTeam : Team {
  std::vector<std::string>* log;
  int holdouts;  // the partner votes "go on" this many times, then follows
  ScriptedTeam(std::vector<std::string>* l, int h) : log(l), holdouts(h) {}
  bool all_agree(bool local) override {
    log->push_back("agree");
    return holdouts-- > 0 ? false : local;
  }
  double max_across(double local) override {
    log->push_back("max");
    return local;
  }
  std::vector<double> combine(const std::vector<double>& local) override {
    log->push_back("combine");
    return std::vector<double>(local.size(), 1.0);  // the partner's figures win
  }
};

TEST(Measurement, CoordinationHappensBetweenBlocksOnlyAndCombinesOnce) {
  MeasureConfig c;
  c.cold = false;
  c.warmup_time_s = 0;
  c.max_time_s = 10;
  c.max_samples = 5;
  c.min_samples = 1;
  c.noise_target = -1;  // only max_samples stops it
  c.min_sample_s = 200e-6;            // 50 us launches: blocks of 4
  c.min_sample_multi_rank_s = 100e-6;  // below min_sample_s: the single-rank length rules
  std::vector<std::string> log;
  ScriptedTeam team(&log, 2);
  ScriptedBackend backend(/*virtual_clock=*/true);
  Measurement m = measure(backend, c, [&] {
    log.push_back("launch");
    backend.advance(50e-6);
  }, &team);
  EXPECT_EQ(m.seconds.count, 5);
  EXPECT_DOUBLE_EQ(m.seconds.median, 1.0);         // the combined samples are the row's
  EXPECT_LT(m.local_seconds.median, 1e-3);         // this member's own are kept apart
  ASSERT_EQ(m.launches_per_sample, 4);
  // After the warm-up, the log is: max (batch size), then per sample one agreement
  // followed by exactly one block of launches, then the closing agreement and one combine.
  auto it = std::find(log.begin(), log.end(), "max");
  ASSERT_NE(it, log.end());
  std::vector<std::string> tail(it + 1, log.end());
  int agreements = 0, combines = 0;
  size_t i = 0;
  while (i < tail.size()) {
    if (tail[i] == "agree") {
      ++agreements;
      size_t run = 0;
      while (i + 1 + run < tail.size() && tail[i + 1 + run] == "launch") ++run;
      EXPECT_TRUE(run == 0 || static_cast<int>(run) == m.launches_per_sample) << "a block was split at " << i;
      i += 1 + run;
    } else {
      EXPECT_EQ(tail[i], "combine");
      ++combines;
      ++i;
    }
  }
  EXPECT_EQ(combines, 1);
  EXPECT_EQ(agreements, 5 + 1);  // one before each block, one that ends sampling
  EXPECT_EQ(std::count(log.begin(), log.end(), "combine"), 1);
}

TEST(Measurement, TeamBlocksLastTheMultiRankMinimum) {
  // 50 us launches: alone, blocks of ceil(100 us / 50 us) = 2; in a team, ceil(1 ms / 50 us) = 20,
  // so the ranks' skew leaving each agreement is spread over 1 ms, not 100 us.
  MeasureConfig c;
  c.cold = false;
  c.warmup_time_s = 0;
  c.max_samples = 3;
  c.min_samples = 1;
  c.noise_target = -1;
  ScriptedBackend alone_backend(/*virtual_clock=*/true);
  Measurement alone = measure(alone_backend, c, [&] { alone_backend.advance(50e-6); });
  EXPECT_EQ(alone.launches_per_sample, 2);
  std::vector<std::string> log;
  ScriptedTeam team(&log, 0);
  ScriptedBackend team_backend(/*virtual_clock=*/true);
  Measurement together = measure(team_backend, c, [&] { team_backend.advance(50e-6); }, &team);
  EXPECT_EQ(together.launches_per_sample, 20);
  // Launches already longer than the minimum are not batched.
  ScriptedBackend long_backend(/*virtual_clock=*/true);
  Measurement slow = measure(long_backend, c, [&] { long_backend.advance(2e-3); }, &team);
  EXPECT_EQ(slow.launches_per_sample, 1);
}

TEST(Measurement, CombineSamplesPerSampleOverTakingPartRanks) {
  const std::vector<std::vector<double>> per_rank = {{1, 4}, {3, 2}, {0, 0}};
  EXPECT_EQ(combine_samples(per_rank, {true, true, false}, Combine::max), (std::vector<double>{3, 4}));
  EXPECT_EQ(combine_samples(per_rank, {true, true, false}, Combine::avg), (std::vector<double>{2, 3}));
  EXPECT_EQ(combine_samples(per_rank, {true, true, false}, Combine::min), (std::vector<double>{1, 2}));
  // An idle rank is left out of the average; with nobody taking part, all count.
  EXPECT_EQ(combine_samples(per_rank, {false, false, false}, Combine::avg), (std::vector<double>{4.0 / 3, 2}));
  EXPECT_THROW(combine_samples({{1, 2}, {1}}, {true, true}, Combine::max), std::invalid_argument);
  EXPECT_EQ(parse_combine("avg"), Combine::avg);
  EXPECT_THROW(parse_combine("mean"), std::exception);
}

TEST(Measurement, MinSamplesAreHonouredOverTheTimeCap) {
  auto host = make_backend("host");
  MeasureConfig c;
  c.cold = false;
  c.warmup_time_s = 0;
  c.max_time_s = 0.01;  // two launches' worth
  c.min_samples = 50;
  c.noise_target = 1.0;  // would stop at once
  Measurement m = measure(*host, c, [] { spin_for(5e-3); });
  EXPECT_EQ(m.seconds.count, 50);
  EXPECT_EQ(m.stop_reason, StopReason::min_samples);
  EXPECT_GT(m.sampling_seconds, 0.2);
}

TEST(Measurement, TimeCapStartsAfterTheOneTimeFlushAllocation) {
  ScriptedBackend backend(/*virtual_clock=*/false, /*first_flush_s=*/0.3);
  MeasureConfig c;
  c.cold = true;
  c.warmup_time_s = 0;
  c.min_samples = 1;
  c.noise_target = -1;  // never met: the cap stops sampling
  c.max_time_s = 0.25;
  Measurement m = measure(backend, c, [] { spin_for(100e-6); });
  EXPECT_EQ(m.stop_reason, StopReason::time_cap);
  // With the 0.3 s first flush inside the 0.25 s cap, sampling would end after its first
  // sample; after it, 0.25 s holds thousands of 100 us samples (hundreds when loaded).
  EXPECT_GE(m.seconds.count, 3);
  EXPECT_GT(m.wall_seconds, 0.3);
  EXPECT_LE(m.sampling_seconds, m.wall_seconds - 0.3);  // the flush is outside the sampling time
}

TEST(Measurement, BatchComesFromTheMedianOfWarmupTimings) {
  // Every 5th launch is pre-empted (100x slower): the batch must follow the typical launch.
  ScriptedBackend backend(/*virtual_clock=*/true);
  MeasureConfig c;
  c.cold = false;
  c.warmup_time_s = 0.02;
  c.max_time_s = 0.05;
  int i = 0;
  Measurement m = measure(backend, c, [&] { backend.advance(++i % 5 == 0 ? 200e-6 : 2e-6); });
  // 100 us / 2 us; sized on a pre-empted launch (200 us) it would be 1, on the mean (41.6 us) 3.
  EXPECT_NEAR(m.launches_per_sample, 50, 1);
  EXPECT_GT(m.warmup_launches, 5);
}

TEST(Measurement, ManySamplesCostLinearNotQuadraticTime) {
  auto host = make_backend("host");
  MeasureConfig c;
  c.cold = false;
  c.warmup_time_s = 0;
  c.min_sample_s = 0;     // one launch per sample
  c.noise_target = -1;    // never met: every noise check runs its course
  c.max_time_s = 60;
  c.max_samples = 40000;
  Measurement m = measure(*host, c, [] {});
  EXPECT_EQ(m.seconds.count, 40000);
  EXPECT_EQ(m.stop_reason, StopReason::max_samples);
  // Re-sorting after every sample takes minutes here; incremental checks take milliseconds.
  EXPECT_LT(m.sampling_seconds, 5.0);
}

TEST(Measurement, MinTimeKeepsSamplingPastConvergence) {
  auto host = make_backend("host");
  MeasureConfig c;
  c.cold = false;
  c.warmup_time_s = 0;
  c.noise_target = 100.0;  // met at the first check
  c.min_time_s = 0.1;
  c.max_time_s = 10.0;
  Measurement m = measure(*host, c, [] { spin_for(1e-3); });
  EXPECT_EQ(m.stop_reason, StopReason::noise_target);
  EXPECT_GE(m.sampling_seconds, 0.1);
}

TEST(Measurement, WorldTeamCombinesEveryRanksSamplesOnce) {
  // Two rank threads: rank 1 takes no part (idle in the point), so avg is rank 0's own.
  auto worlds = make_thread_worlds(2);
  std::vector<double> got[2];
  auto body = [&](int r, bool part, Combine how) {
    WorldTeam team(*worlds[static_cast<size_t>(r)], how, part);
    got[r] = team.combine(r == 0 ? std::vector<double>{1, 4} : std::vector<double>{3, 0});
  };
  for (auto how : {Combine::max, Combine::avg}) {
    std::thread other(body, 1, how == Combine::max, how);
    body(0, true, how);
    other.join();
    const std::vector<double> expected = how == Combine::max ? std::vector<double>{3, 4} : std::vector<double>{1, 4};
    EXPECT_EQ(got[0], expected);
    EXPECT_EQ(got[1], expected);  // every rank gets the combined samples
  }
}
