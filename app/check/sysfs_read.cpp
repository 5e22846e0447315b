#include "app/check/sysfs_read.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace gpucal::check {

namespace fs = std::filesystem;

std::optional<std::string> sysfs_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<long long> sysfs_integer(const fs::path& p) {
  const auto line = sysfs_line(p);
  if (!line) return std::nullopt;
  try {
    std::size_t used = 0;
    const long long v = std::stoll(*line, &used);
    return used > 0 ? std::optional<long long>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<fs::path> sysfs_entries(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<int, fs::path>> numbered_cpus(const fs::path& dir) {
  std::vector<std::pair<int, fs::path>> out;
  for (const auto& cpu : sysfs_entries(dir, "cpu")) {
    const std::string name = cpu.filename().string().substr(3);
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) out.emplace_back(std::stoi(name), cpu);
  }
  return out;
}

}  // namespace gpucal::check
