#include "bench_memory/host_threads.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpucal::memory::host {

namespace {

// The cgroup path of this process for a controller ("" for cgroup v2's unified line).
std::string cgroup_path(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    if (controller.empty() && line.compare(0, a, "0") == 0) return line.substr(b + 1);  // v2: "0::/path"
    std::stringstream list(line.substr(a + 1, b - a - 1));
    for (std::string c; std::getline(list, c, ',');)
      if (c == controller) return line.substr(b + 1);
  }
  return "";
}

// Quota over period from the files of one cgroup folder; 0 when unlimited or absent.
double quota_in(const std::string& dir) {
  double quota = 0, period = 0;
  std::string word;
  if (std::ifstream v2(dir + "/cpu.max"); v2 >> word >> period) {
    quota = word == "max" ? 0 : std::atof(word.c_str());
  } else if (std::ifstream q(dir + "/cpu.cfs_quota_us"), p(dir + "/cpu.cfs_period_us");
             q >> quota && p >> period) {
    quota = quota < 0 ? 0 : quota;
  }
  return quota > 0 && period > 0 ? quota / period : 0;
}

bool openmp_binds() {
  for (const char* name : {"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"})
    if (const char* v = std::getenv(name); v && *v && std::string(v) != "false") return true;
  return false;
}

std::string join(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

ThreadPlan make_plan() {
  ThreadPlan plan;
  const std::vector<int> cpus = allowed_cpus();
  plan.threads = team_size(omp_get_max_threads(), static_cast<int>(cpus.size()), cgroup_cpu_quota());
  if (openmp_binds()) {
    plan.binding = "OpenMP (OMP_PROC_BIND/OMP_PLACES)";
    return plan;
  }
  plan.cpus.assign(cpus.begin(),
                   cpus.begin() + std::min<size_t>(cpus.size(), static_cast<size_t>(plan.threads)));
  if (plan.cpus.empty()) {
    plan.binding = "unbound (affinity mask unreadable)";
    return plan;
  }
  // libgomp keeps its pool threads in order between regions, so team thread t stays the
  // thread bound here.
  bool all_bound = true;
#pragma omp parallel num_threads(plan.threads) reduction(&& : all_bound)
  {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(plan.cpus[static_cast<size_t>(omp_get_thread_num())], &one);
    all_bound = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
  }
  plan.binding = all_bound ? join(plan.cpus) : "unbound (pthread_setaffinity_np refused)";
  return plan;
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

double cgroup_cpu_quota() {
  // The process's own cgroup first, then the namespace's root (inside a container the path
  // in /proc/self/cgroup may name a folder the container does not see).
  for (const std::string& dir :
       {"/sys/fs/cgroup" + cgroup_path(""), "/sys/fs/cgroup/cpu" + cgroup_path("cpu"),
        std::string("/sys/fs/cgroup"), std::string("/sys/fs/cgroup/cpu")})
    if (const double q = quota_in(dir); q > 0) return q;
  return 0;
}

int team_size(int wanted, int allowed, double quota) {
  int n = std::max(1, wanted);
  if (allowed > 0) n = std::min(n, allowed);
  if (quota > 0) n = std::min(n, std::max(1, static_cast<int>(std::floor(quota))));
  return n;
}

const ThreadPlan& thread_plan() {
  static const ThreadPlan plan = make_plan();
  return plan;
}

}  // namespace gpucal::memory::host
