// Rows a loaded machine has spoiled: the signs, in a point's own per-sample record, that its
// times measure the scheduler rather than the work. Three independent signs, each a reason:
//
// 1. Tick-quantised delays. A CPU-bound competitor is switched out only at a scheduler tick,
//    so a thread it preempts loses whole ticks: the samples' excess over the fastest one sits
//    at multiples of the tick. The tick tried first is the kernel's own (kernel_tick_seconds:
//    the resolution of CLOCK_MONOTONIC_COARSE, which advances once per jiffy, i.e. 1/CONFIG_HZ;
//    sysconf(_SC_CLK_TCK) is USER_HZ, a fixed 100 whatever the kernel's HZ), then 10, 4 and
//    1 ms, the periods of Linux's common HZ choices (100, 250, 1000): under a hypervisor the
//    host's scheduler steals time in its own ticks, which the guest cannot read.
// 2. Two states: the median far above the minimum with an empty band between a recurring
//    fast group and the rest (a point that ran partly alone, partly shared).
// 3. Off its CPU: in many timed blocks the measuring thread's CPU time is far below the
//    block's wall time (it was runnable but not running). Judged per block, so one long
//    preemption cannot speak for a point whose other blocks ran whole; judged only where that
//    thread does the work itself.
//
// A point is flagged only when the sign is large enough to move its statistics; a few
// preempted samples among many are what the robust median already absorbs.
#pragma once

#include <string>
#include <vector>

namespace gpucal {

// 1/CONFIG_HZ in seconds, or 0 where the coarse clock does not report it.
double kernel_tick_seconds();
// The ticks tried, coarsest first, without repeats: the kernel's, 10, 4 and 1 ms.
std::vector<double> candidate_ticks();
// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID), seconds.
double thread_cpu_seconds();

struct PreemptionInput {
  std::vector<double> sample_seconds;  // per launch, as in the row
  int launches_per_sample = 1;
  // Per timed block: the measuring thread's CPU time / the block's wall time; empty: not judged.
  std::vector<double> block_cpu_share;
};

// Why the point's timings are suspect ("; "-joined reasons), or "" when no sign is large
// enough. `ticks` in seconds (candidate_ticks() in a run; fixed values in tests).
std::string preemption_reason(const PreemptionInput& in, const std::vector<double>& ticks);

}  // namespace gpucal
