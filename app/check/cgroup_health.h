// The CPU time a node's processes may use, from their cgroup: the cgroup v1 cpu controller's
// cpu.cfs_quota_us / cpu.cfs_period_us or cgroup v2's cpu.max, of the process's own cgroup and
// every one above it (the tightest binds). A quota below the CPUs the process may run on holds a
// bench's threads back whatever the hardware does: a node capped by a container or a
// misconfigured cgroup measures like a healthy one in its fastest samples and runs its suite
// slower. Read from /proc/self/cgroup and the cgroup mounts under the sysfs root; a copy of a root
// (a fixture) keeps proc/ beside its sys/.
#pragma once
#include <string>
#include <vector>

#include "app/check/health.h"

namespace gpucal::check {

// Fills into.cpu_quota and into.cpu_quota_source.
void read_cpu_quota(const std::string& sysfs_root, HealthReadings& into);

// cpu_quota: fail under half the CPUs the process may run on, warn under them, pass otherwise or
// with no quota; not available where the cgroup cannot be read.
void judge_cpu_quota(const HealthReadings& r, std::vector<HealthLine>& out);

}  // namespace gpucal::check
