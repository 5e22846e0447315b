// How many OpenMP threads the host kernels use and where they run. The team is sized to the
// CPUs this process may use (its affinity mask, and a cgroup CPU quota below it), never to
// the machine's CPU count or to OMP_NUM_THREADS beyond them, and each team thread is bound to
// one of those CPUs (thread t on the t-th): two team threads never share a CPU, a thread does
// not migrate between samples, and a competitor on a CPU shows as that thread's preemption
// (the row's `suspect` column), not as an idle core the team assumed. A binding the user asked
// OpenMP for (OMP_PROC_BIND, OMP_PLACES) is left to OpenMP.
#pragma once

#include <string>
#include <vector>

namespace gpucal::memory::host {

struct ThreadPlan {
  int threads = 1;        // the team's size
  std::vector<int> cpus;  // CPU of team thread t (empty when OpenMP binds)
  std::string binding;    // the row's thread_cpus cell: "0,1", or who binds instead
};

// The CPUs in this process's affinity mask, ascending.
std::vector<int> allowed_cpus();
// CPUs' worth of time the cgroup quota grants (cpu.max, or cpu.cfs_quota_us / cfs_period_us),
// 0 when there is none or it cannot be read.
double cgroup_cpu_quota();
// The team size for `wanted` threads (omp_get_max_threads), `allowed` CPUs and `quota` (0: none):
// min(wanted, allowed, floor(quota)), at least 1. A fractional quota rounds down: a team that
// outruns its quota is stopped by the throttle for the rest of each period.
int team_size(int wanted, int allowed, double quota);

// Computed and applied (threads bound) on the first call; the same plan afterwards.
const ThreadPlan& thread_plan();

}  // namespace gpucal::memory::host
