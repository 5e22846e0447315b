#include "core/measure/preemption.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/measure/stats.h"

namespace gpucal {

namespace {

// Below this many samples no distribution sign is judged (the measurement's default
// --min-samples is 10).
constexpr size_t kMinSamples = 8;
// A sign counts when it touches at least this share of the samples: then p90, the mean
// and the noise figure are the scheduler's, and the median has moved by that many ranks.
constexpr double kSuspectShare = 0.2;
// Delays on a tick grid: at least this share of the delayed samples within the tolerance of
// a whole multiple. A delay landing there by chance has odds 2 * tolerance / tick <= 0.3, so
// 3 of 4 or more on the grid is a pattern, not luck.
constexpr double kOnGridShare = 0.75;
constexpr size_t kMinDelayed = 3;
// Tolerance: 5% of the tick, or twice the jitter of the undelayed samples when larger; a
// tick finer than the work's own jitter (tolerance above 15% of it) cannot be resolved.
constexpr double kTolFloor = 0.05, kTolCeiling = 0.15;
// Two states: a fast group within 10% of the minimum (at least 2 samples and 5%), an empty
// band of at least 25% of the minimum above it, and the median at least 1.5x the minimum.
constexpr double kFastBand = 1.10, kMinGap = 0.25, kMedianOverMin = 1.5, kMinFastShare = 0.05;
// Off its CPU: a block in which the thread ran less than half the block's wall time.
constexpr double kMinCpuShare = 0.5;

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * share);
  return buf;
}

std::string fixed(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Sign 1 for one tick: the blocks' delays over the fastest block.
std::string tick_reason(const std::vector<double>& delays, double tick) {
  std::vector<double> delayed, undelayed;
  for (double d : delays) (d >= tick / 2 ? delayed : undelayed).push_back(d);
  if (delayed.size() < kMinDelayed || delayed.size() < kSuspectShare * delays.size()) return "";
  const double jitter = undelayed.empty() ? 0 : percentile_select(undelayed, 0.9);
  const double tol = std::max(kTolFloor * tick, 2 * jitter);
  if (tol > kTolCeiling * tick) return "";
  size_t on_grid = 0;
  for (double d : delayed) on_grid += std::fabs(d - std::round(d / tick) * tick) <= tol;
  if (on_grid < kOnGridShare * delayed.size()) return "";
  return percent(static_cast<double>(delayed.size()) / delays.size()) + " of samples delayed by whole " +
         fixed(tick * 1e3, "%.3g") + " ms scheduler ticks";
}

// Sign 2: a recurring fast group, an empty band above it, and the median well above both.
std::string two_states_reason(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  const double min = s.front(), median = percentile_sorted(s, 0.5);
  if (!(min > 0) || median < kMedianOverMin * min) return "";
  size_t fast = 0;
  while (fast < s.size() && s[fast] <= kFastBand * min) ++fast;
  if (fast < 2 || fast < kMinFastShare * s.size() || fast * 2 >= s.size()) return "";
  // The widest empty band between consecutive samples from the fast group up to the median.
  double gap = 0;
  for (size_t i = fast; i < s.size() && s[i - 1] <= median; ++i) gap = std::max(gap, s[i] - s[i - 1]);
  if (gap < kMinGap * min) return "";
  return "median " + fixed(median / min, "%.2g") + "x the minimum, two states (" +
         percent(static_cast<double>(fast) / s.size()) + " of samples near the minimum)";
}

std::string cpu_share_reason(const std::vector<double>& shares) {
  if (shares.size() < kMinSamples) return "";
  const auto off = static_cast<size_t>(
      std::count_if(shares.begin(), shares.end(), [](double s) { return s < kMinCpuShare; }));
  if (off < kSuspectShare * shares.size()) return "";
  return "the measuring thread was off its CPU for over half of " +
         percent(static_cast<double>(off) / shares.size()) + " of its timed blocks";
}

}  // namespace

double kernel_tick_seconds() {
  timespec res{};
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0) return 0;
  const double tick = static_cast<double>(res.tv_sec) + 1e-9 * static_cast<double>(res.tv_nsec);
  // A coarse clock finer than 0.5 ms or coarser than 20 ms is not a jiffy (HZ is 50..2000).
  return tick >= 5e-4 && tick <= 2e-2 ? tick : 0;
}

std::vector<double> candidate_ticks() {
  std::vector<double> ticks;
  for (double t : {kernel_tick_seconds(), 10e-3, 4e-3, 1e-3})
    if (t > 0 && std::none_of(ticks.begin(), ticks.end(), [t](double u) { return std::fabs(u - t) < 1e-6; }))
      ticks.push_back(t);
  std::stable_sort(ticks.begin(), ticks.end(), std::greater<double>());
  return ticks;
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

std::string preemption_reason(const PreemptionInput& in, const std::vector<double>& ticks) {
  std::vector<std::string> reasons;
  if (in.sample_seconds.size() >= kMinSamples) {
    const double lps = std::max(1, in.launches_per_sample);
    const double fastest = *std::min_element(in.sample_seconds.begin(), in.sample_seconds.end());
    std::vector<double> delays;  // per block: preemption costs a block whole ticks, not a launch
    for (double s : in.sample_seconds) delays.push_back((s - fastest) * lps);
    for (double tick : ticks) {
      const std::string r = tick_reason(delays, tick);
      if (!r.empty()) {
        reasons.push_back(r);
        break;
      }
    }
    if (const std::string r = two_states_reason(in.sample_seconds); !r.empty()) reasons.push_back(r);
  }
  if (const std::string r = cpu_share_reason(in.block_cpu_share); !r.empty()) reasons.push_back(r);
  std::string joined;
  for (const auto& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
  return joined;
}

}  // namespace gpucal
