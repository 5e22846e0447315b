#include "core/world/team.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/errors.h"

namespace gpucal {

std::string to_string(Combine how) {
  switch (how) {
    case Combine::max:
      return "max";
    case Combine::avg:
      return "avg";
    case Combine::min:
      return "min";
  }
  return "?";
}

Combine parse_combine(const std::string& name) {
  if (name == "max") return Combine::max;
  if (name == "avg") return Combine::avg;
  if (name == "min") return Combine::min;
  throw UsageError("--combine: expected max, avg or min, got '" + name + "'");
}

std::vector<double> combine_samples(const std::vector<std::vector<double>>& per_rank,
                                    const std::vector<bool>& takes_part, Combine how) {
  if (per_rank.empty()) return {};
  const size_t n = per_rank.front().size();
  std::vector<size_t> members;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    if (per_rank[r].size() != n) throw std::invalid_argument("ranks recorded different sample counts");
    if (r < takes_part.size() && takes_part[r]) members.push_back(r);
  }
  if (members.empty())
    for (size_t r = 0; r < per_rank.size(); ++r) members.push_back(r);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    double acc = per_rank[members.front()][i];
    for (size_t k = 1; k < members.size(); ++k) {
      const double v = per_rank[members[k]][i];
      acc = how == Combine::max ? std::max(acc, v) : how == Combine::min ? std::min(acc, v) : acc + v;
    }
    out[i] = how == Combine::avg ? acc / static_cast<double>(members.size()) : acc;
  }
  return out;
}

namespace {
// A rank's samples as bytes: a flag byte (takes part) followed by the doubles.
std::string pack(const std::vector<double>& samples, bool takes_part) {
  std::string bytes(1 + samples.size() * sizeof(double), '\0');
  bytes[0] = takes_part ? 1 : 0;
  if (!samples.empty()) std::memcpy(&bytes[1], samples.data(), samples.size() * sizeof(double));
  return bytes;
}
}  // namespace

std::vector<double> WorldTeam::combine(const std::vector<double>& local) {
  if (world_.size() == 1) return local;
  std::vector<unsigned char> result;
  const auto gathered = world_.gather_strings(pack(local, takes_part_));  // rank 0 only
  if (world_.is_root()) {
    std::vector<std::vector<double>> per_rank;
    std::vector<bool> takes_part;
    for (const auto& bytes : gathered) {
      std::vector<double> samples(bytes.empty() ? 0 : (bytes.size() - 1) / sizeof(double));
      if (!samples.empty()) std::memcpy(samples.data(), bytes.data() + 1, samples.size() * sizeof(double));
      per_rank.push_back(std::move(samples));
      takes_part.push_back(!bytes.empty() && bytes[0] != 0);
    }
    const auto combined = combine_samples(per_rank, takes_part, how_);
    result.resize(combined.size() * sizeof(double));
    if (!combined.empty()) std::memcpy(result.data(), combined.data(), result.size());
  }
  world_.broadcast(result, 0);
  std::vector<double> out(result.size() / sizeof(double));
  if (!out.empty()) std::memcpy(out.data(), result.data(), result.size());
  return out;
}

}  // namespace gpucal
