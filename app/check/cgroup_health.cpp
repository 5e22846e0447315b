#include "app/check/cgroup_health.h"
#include "app/check/sysfs_read.h"

#include <sched.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace gpucal::check {

namespace fs = std::filesystem;

namespace {

// One cgroup's limit in CPUs; nullopt for none ("max", -1) or nothing readable.
std::optional<double> limit_v1(const fs::path& dir) {
  const auto quota = sysfs_integer(dir / "cpu.cfs_quota_us"), period = sysfs_integer(dir / "cpu.cfs_period_us");
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;
  return static_cast<double>(*quota) / static_cast<double>(*period);
}

std::optional<double> limit_v2(const fs::path& dir) {
  const auto line = sysfs_line(dir / "cpu.max");
  if (!line) return std::nullopt;
  std::istringstream in(*line);
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  try {
    const double q = std::stod(quota);
    if (q > 0) return q / period;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

bool has_controller(const std::string& list, const std::string& name) {
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ','))
    if (item == name) return true;
  return false;
}

// The v1 mount of the cpu controller: a directory of <sysfs>/fs/cgroup whose name lists "cpu"
// ("cpu", "cpu,cpuacct").
std::optional<fs::path> v1_cpu_mount(const fs::path& cgroup_root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cgroup_root, ec))
    if (e.is_directory(ec) && has_controller(e.path().filename().string(), "cpu") &&
        fs::exists(e.path() / "cpu.cfs_period_us", ec))
      return e.path();
  return std::nullopt;
}

int cpus_allowed(const fs::path& sysfs_root) {
  if (sysfs_root == "/sys") {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  }
  return static_cast<int>(numbered_cpus(sysfs_root / "devices/system/cpu").size());
}

std::string cpus_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", v);
  return text;
}

}  // namespace

void read_cpu_quota(const std::string& sysfs_root, HealthReadings& into) {
  const fs::path sys(sysfs_root);
  const fs::path proc = sys == "/sys" ? fs::path("/proc") : sys.parent_path() / "proc";
  std::ifstream in(proc / "self/cgroup");
  if (!in) {
    into.cpu_quota_source = "no " + (proc / "self/cgroup").string();
    return;
  }
  const fs::path root = sys / "fs/cgroup";
  std::string line;
  while (std::getline(in, line)) {  // "ID:CONTROLLERS:PATH"; v2's is "0::PATH"
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    std::optional<fs::path> mount;
    bool v2 = false;
    if (controllers.empty()) {  // v2: where its root lists the cpu controller (not in a hybrid's unified/)
      for (const fs::path& m : {root, root / "unified"}) {
        const auto list = sysfs_line(m / "cgroup.controllers");
        if (list && (" " + *list + " ").find(" cpu ") != std::string::npos) {
          mount = m, v2 = true;
          break;
        }
      }
    } else if (has_controller(controllers, "cpu")) {
      mount = v1_cpu_mount(root);
    }
    if (!mount) continue;
    CpuQuotaReading q;
    q.cgroup = path;
    q.allowed_cpus = cpus_allowed(sys);
    // The process's cgroup and each one above it, up to the mount: the tightest quota binds.
    fs::path dir = *mount / fs::path(path).relative_path();
    for (fs::path rel = fs::path(path).relative_path();; rel = rel.parent_path(), dir = *mount / rel) {
      const auto limit = v2 ? limit_v2(dir) : limit_v1(dir);
      if (limit && (q.limit_cpus == 0 || *limit < q.limit_cpus)) q.limit_cpus = *limit, q.bound_by = "/" + rel.string();
      if (rel.empty()) break;
    }
    into.cpu_quota = q;
    into.cpu_quota_source = std::string(v2 ? "cgroup v2 cpu.max" : "cgroup v1 cpu controller") + " under " + mount->string();
    return;
  }
  into.cpu_quota_source = "no cpu controller of " + (proc / "self/cgroup").string() + " mounted under " + root.string();
}

void judge_cpu_quota(const HealthReadings& r, std::vector<HealthLine>& out) {
  if (!r.cpu_quota) return out.push_back({"cpu_quota", "-", "not available", "-", r.cpu_quota_source});
  const CpuQuotaReading& q = *r.cpu_quota;
  const std::string of = " of the " + std::to_string(q.allowed_cpus) + " it may run on";
  if (q.limit_cpus <= 0) return out.push_back({"cpu_quota", q.cgroup, "pass", "none", "no CPU quota on its cgroup or above"});
  const std::string value = cpus_text(q.limit_cpus) + " CPUs" + of;
  const std::string why = "cgroup " + q.bound_by + " allows " + cpus_text(q.limit_cpus) + " CPUs" + of +
                          ": the benches' threads wait for their quota";
  if (q.allowed_cpus > 0 && q.limit_cpus < 0.5 * q.allowed_cpus) return out.push_back({"cpu_quota", q.cgroup, "fail", value, why});
  if (q.allowed_cpus > 0 && q.limit_cpus < 0.95 * q.allowed_cpus) return out.push_back({"cpu_quota", q.cgroup, "warn", value, why});
  out.push_back({"cpu_quota", q.cgroup, "pass", value});
}

}  // namespace gpucal::check
