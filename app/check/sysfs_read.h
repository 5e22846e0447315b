// Reading sysfs (and /proc) files as the kernel writes them, for the health checks
// (app/check/health.cpp, app/check/cgroup_health.cpp).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpucal::check {

// A file's first line; nullopt when it cannot be read or is empty.
std::optional<std::string> sysfs_line(const std::filesystem::path& p);

// A file's first line as an integer ("-1", "100000"); nullopt when it is none.
std::optional<long long> sysfs_integer(const std::filesystem::path& p);

// The entries of `dir` whose names start with `prefix`, sorted; none when `dir` cannot be read.
std::vector<std::filesystem::path> sysfs_entries(const std::filesystem::path& dir, const std::string& prefix);

// The numbered CPUs under devices/system/cpu (cpu0, cpu1, ...; not cpufreq, cpuidle), with their folders.
std::vector<std::pair<int, std::filesystem::path>> numbered_cpus(const std::filesystem::path& dir);

}  // namespace gpucal::check
