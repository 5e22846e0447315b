#include "core/measure/measurement.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/measure/preemption.h"

namespace gpucal {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

constexpr int kMaxWarmupLaunches = 1 << 16;
constexpr int kMaxWarmupRound = 4096;
constexpr size_t kSizingTimings = 32;  // the most recent warm-up timings that size the batch
constexpr int kMaxBatch = 1 << 20;

// Untimed launches in rounds of 1, 2, 4, ... launches, each timed alone (for sizing the
// batch); the members agree on ending it between rounds only. Returns the per-launch
// estimate: the median of the last timings, so one pre-empted launch cannot set the batch.
double warm_up(const MeasureConfig& config, const std::function<void()>& launch, DeviceTimer& timer,
               Team* team, Measurement& m) {
  std::vector<double> timings;
  const double t_start = now_s();
  for (int round = 1;; round = std::min(round * 2, kMaxWarmupRound)) {
    for (int i = 0; i < round; ++i) {
      timer.start();
      launch();
      timer.stop();
      timings.push_back(timer.elapsed_seconds());
    }
    m.warmup_launches += round;
    const bool done = now_s() - t_start >= config.warmup_time_s || m.warmup_launches >= kMaxWarmupLaunches;
    if (team ? team->all_agree(done) : done) break;
  }
  std::vector<double> recent(
      timings.end() - static_cast<std::ptrdiff_t>(std::min(timings.size(), kSizingTimings)), timings.end());
  return percentile_select(recent, 0.5);
}

// Launches per hot sample so a block lasts at least min_sample_s, or min_sample_multi_rank_s
// when a team measures (timer reads, launch gaps and the ranks' skew leaving the agreement
// amortised); the same on every member (the slowest member's estimate).
int batch_size(const MeasureConfig& config, double per_launch_s, bool team) {
  if (config.cold) return 1;  // one launch right after each flush
  const double min_block_s =
      team ? std::max(config.min_sample_s, config.min_sample_multi_rank_s) : config.min_sample_s;
  if (per_launch_s >= min_block_s) return 1;
  const double n = std::ceil(min_block_s / std::max(per_launch_s, 1e-9));
  return static_cast<int>(std::min<double>(n, kMaxBatch));
}

}  // namespace

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::noise_target:
      return "noise_target";
    case StopReason::time_cap:
      return "time_cap";
    case StopReason::min_samples:
      return "min_samples";
    case StopReason::max_samples:
      return "max_samples";
  }
  return "?";
}

namespace {

// The sampling phase: blocks until the members agree to stop (noise target, cap, or
// max_samples); this member's own per-launch samples, and, when `judge_cpu`, its thread's CPU
// time over each block's wall time: judged on the host backend in a single process, where the
// thread does the work itself (ranks waiting for each other and GPU waits legitimately sleep).
struct Sampler {
  const MeasureConfig& config;
  Backend& backend;
  DeviceTimer& timer;
  Team* team;
  bool judge_cpu;
  std::vector<double> local{}, block_cpu_share{};
  bool cap_passed_early = false;

  void run(const std::function<void()>& launch, int batch, double t_sampling) {
    const int max_samples = std::max(config.max_samples, config.min_samples);
    bool stop = false, converged_locally = false;
    int next_check = config.min_samples;
    while (!(team ? team->all_agree(stop) : stop)) {
      if (config.cold) backend.flush_cache();
      const double cpu_before = judge_cpu ? thread_cpu_seconds() : 0;  // outside the timed block
      timer.start();
      for (int i = 0; i < batch; ++i) launch();
      timer.stop();
      const double block = timer.elapsed_seconds();
      if (judge_cpu && block > 0) block_cpu_share.push_back((thread_cpu_seconds() - cpu_before) / block);
      local.push_back(block / batch);
      const int n = static_cast<int>(local.size());
      const double elapsed = now_s() - t_sampling;
      if (n < config.min_samples) {
        cap_passed_early = cap_passed_early || elapsed >= config.max_time_s;
        continue;
      }
      if (!converged_locally && elapsed >= config.min_time_s && n >= next_check) {
        next_check = n + std::max(1, n / 16);
        converged_locally =
            n > 1 && median_rel_se(local) <= config.noise_target;  // one sample has no noise figure
      }
      stop = n >= max_samples || elapsed >= config.max_time_s || converged_locally;
    }
  }
};

}  // namespace

Measurement measure(Backend& backend, const MeasureConfig& config, const std::function<void()>& launch,
                    Team* team) {
  Measurement m;
  const double t_begin = now_s();
  auto timer = backend.make_timer();

  // One-time work before anything is timed or the cap starts: the first flush allocates
  // and fills the flush buffer; the first launch pays for lazy initialisation.
  if (config.cold) backend.flush_cache();
  launch();
  backend.synchronize();
  m.warmup_launches = 1;
  double per_launch = warm_up(config, launch, *timer, team, m);
  if (team) per_launch = team->max_across(per_launch);
  const int batch = batch_size(config, per_launch, team != nullptr);
  m.launches_per_sample = batch;

  // Samples: [agree] [flush] start, `batch` launches, stop. The agreement before each
  // block is the only coordination; the noise is checked on this member's own samples at
  // a geometric schedule (each check is O(n), so the total stays O(n)).
  const double t_sampling = now_s();
  Sampler sampler{config, backend, *timer, team, team == nullptr && backend.is_host(), {}};
  sampler.run(launch, batch, t_sampling);
  m.sampling_seconds = now_s() - t_sampling;

  std::vector<double>& local = sampler.local;
  const int n = static_cast<int>(local.size());
  m.stop_reason = n >= std::max(config.max_samples, config.min_samples) ? StopReason::max_samples
                  : sampler.cap_passed_early                            ? StopReason::min_samples
                  : m.sampling_seconds >= config.max_time_s             ? StopReason::time_cap
                                                                        : StopReason::noise_target;
  m.local_seconds = summarize(local);
  m.sample_seconds = team ? team->combine(local) : std::move(local);
  m.seconds = summarize(m.sample_seconds);
  m.converged = n >= config.min_samples && n > 1 && m.seconds.median_rel_se <= config.noise_target;
  m.suspect =
      preemption_reason({m.sample_seconds, batch, std::move(sampler.block_cpu_share)}, candidate_ticks());
  m.wall_seconds = now_s() - t_begin;
  return m;
}

}  // namespace gpucal
