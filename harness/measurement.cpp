#include "harness/measurement.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gpucal {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Measurement measure(Backend& backend, const MeasureConfig& config, const std::function<void()>& launch,
                    const StopAgreement& agree, const SampleCombiner& combine) {
  auto all_agree = [&](bool local) { return agree ? agree(local) : local; };
  auto combined = [&](double s) { return combine ? combine(s) : s; };
  Measurement m;
  const double t_begin = now_s();
  auto timer = backend.make_timer();

  // Warm-up: first launch pays for lazy initialisation; then launch until the warm-up
  // time has passed, timing single launches to size the batch.
  launch();
  backend.synchronize();
  double single = 0;
  int warm = 0;
  do {
    timer->start();
    launch();
    timer->stop();
    single = combined(timer->elapsed_seconds());
    ++warm;
  } while (!all_agree(now_s() - t_begin >= config.warmup_time_s || warm >= 1000));

  // Cold samples time one launch right after a flush; hot samples batch back-to-back
  // launches so event resolution and launch gaps are amortised.
  int batch = 1;
  if (!config.cold && single > 0 && single < config.min_sample_s)
    batch = static_cast<int>(std::ceil(config.min_sample_s / single));
  m.launches_per_sample = batch;

  const double t_sampling = now_s();
  std::vector<double> local;
  while (true) {
    if (config.cold) backend.flush_cache();
    timer->start();
    for (int i = 0; i < batch; ++i) launch();
    timer->stop();
    const double mine = timer->elapsed_seconds();
    local.push_back(mine / batch);
    m.sample_seconds.push_back(combined(mine) / batch);
    const int n = static_cast<int>(m.sample_seconds.size());
    bool stop = n >= config.max_samples || now_s() - t_sampling >= config.max_time_s;
    if (!stop && n >= config.min_samples) {
      m.seconds = summarize(m.sample_seconds);
      m.converged = m.seconds.median_rel_se <= config.noise_target;
      stop = m.converged;
    }
    if (all_agree(stop)) break;
  }
  m.seconds = summarize(m.sample_seconds);
  m.local_seconds = summarize(local);
  m.converged = static_cast<int>(m.sample_seconds.size()) >= config.min_samples &&
                m.seconds.median_rel_se <= config.noise_target;
  m.wall_seconds = now_s() - t_begin;
  return m;
}

}  // namespace gpucal
