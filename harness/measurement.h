// Timing of one point: warm-up, batched device-timed samples, optional cache flush
// before each sample (cold regime), adaptive stopping on the noise of the median.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/stats.h"

namespace gpucal {

struct MeasureConfig {
  bool cold = true;                   // flush the cache before every sample
  int min_samples = 10;               // before the noise target may stop the loop
  int max_samples = 100000;
  double noise_target = 0.005;        // relative standard error of the median
  double max_time_s = 2.0;            // per point, wall clock, including flushes
  double warmup_time_s = 0.05;        // untimed launches before sampling
  double min_sample_s = 20e-6;        // hot samples batch launches up to at least this
};

struct Measurement {
  std::vector<double> sample_seconds;  // one per sample, per launch (batch time / batch)
  int launches_per_sample = 1;
  Summary seconds;
  bool converged = false;              // noise target reached (false: stopped by the time cap)
  double wall_seconds = 0;
  // This participant's own samples before the SampleCombiner (equal to `seconds` without
  // one): what a rank measured itself, for the spread across ranks.
  Summary local_seconds;
};

// Decides together: every participant passes its local "stop?" and all get the same
// answer (MPI ranks combine with a logical AND). Single-process runs use the identity.
using StopAgreement = std::function<bool(bool local_stop)>;
// Combines one sample across participants (max over ranks for collectives).
using SampleCombiner = std::function<double(double local_seconds)>;

Measurement measure(Backend& backend, const MeasureConfig& config, const std::function<void()>& launch,
                    const StopAgreement& agree = {}, const SampleCombiner& combine = {});

}  // namespace gpucal
