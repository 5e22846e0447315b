// Timing of one point: warm-up, then samples that each time a block of launches (one
// launch after a cache flush in the cold regime), adaptive stopping on the noise of the
// median. Coordination with other participants (MPI ranks, rank threads) happens between
// blocks, never inside one: one agreement before each block (which also lines the ranks
// up, as nccl-tests' barrier does), and the per-sample combination across ranks once, after
// sampling.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/measure/stats.h"

namespace gpucal {

struct MeasureConfig {
  bool cold = true;      // flush the cache before every sample
  int min_samples = 10;  // taken even when the time cap has passed (the cap extends)
  int max_samples = 100000;
  double noise_target = 0.005;  // relative standard error of the median
  // Sampling time cap per point, wall clock. It starts after warm-up and the one-time
  // allocations (the flush buffer), and extends until min_samples are taken.
  double max_time_s = 2.0;
  double min_time_s = 0;        // sampling goes on at least this long (--benchmark_min_time)
  double warmup_time_s = 0.05;  // untimed launches before sampling
  // Hot samples batch launches so one block lasts at least this: the per-block cost (two timer
  // reads, the loop, the sample's bookkeeping: about 0.4 us on the 2-core VM) stays under 1%.
  double min_sample_s = 100e-6;
  // With several ranks, blocks last at least this: every block starts when the ranks leave the
  // agreement, a few microseconds apart, and that skew must stay small next to the block
  // (nccl-tests times 20 iterations per sample for the same reason; osu_latency 1000-10000).
  double min_sample_multi_rank_s = 1e-3;
};

// Why sampling stopped.
enum class StopReason {
  noise_target,  // noise_rel <= noise_target (after min_samples and min_time)
  time_cap,      // max_time_s passed first
  min_samples,   // the cap passed before min_samples; sampling went on to reach them
  max_samples,
};
const char* to_string(StopReason r);

struct Measurement {
  // One per sample, per launch (block time / launches), combined across participants.
  std::vector<double> sample_seconds;
  int launches_per_sample = 1;
  Summary seconds;
  // This participant's own samples before combining (equal to `seconds` alone): what a
  // rank measured itself, for the spread across ranks.
  Summary local_seconds;
  bool converged = false;  // noise target reached (on the combined samples)
  StopReason stop_reason = StopReason::time_cap;
  int warmup_launches = 0;      // untimed launches before sampling
  double sampling_seconds = 0;  // wall clock from the cap's start to the last sample
  double wall_seconds = 0;      // the whole point: warm-up and sampling
  // Why the timings are preemption-dominated (core/measure/preemption.h), "" when they are not.
  std::string suspect;
};

// The participants of a point as the measurement loop sees them. Every member calls the
// same methods in the same order (collective calls). A single process passes none.
class Team {
 public:
  virtual ~Team() = default;
  // Logical AND of every member's vote. Called once before each timed block, so it also
  // lines the members up before the block, as a barrier would.
  virtual bool all_agree(bool local) = 0;
  // The largest value over the members (the warm-up estimate that sizes every member's
  // batch alike).
  virtual double max_across(double local) = 0;
  // Every member's per-sample times (the same count on each), combined per sample (max
  // over ranks by default). Called once, after sampling.
  virtual std::vector<double> combine(const std::vector<double>& local) = 0;
};

Measurement measure(Backend& backend, const MeasureConfig& config, const std::function<void()>& launch,
                    Team* team = nullptr);

}  // namespace gpucal
