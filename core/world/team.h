// The ranks of a World as one measurement Team, and how their per-sample times combine
// (--combine, the counterpart of nccl-tests' -a): every rank times its own blocks; after
// sampling, sample i of the point is the max (default: the slowest rank finishes a
// collective; nccl-tests -a 3), the average (nccl-tests -a 1, its default, and OSU's
// "Avg Latency" when averaged over samples) or the min (-a 2) of the ranks' sample i.
// Ranks that do no work in a point (idle in a pair, outside a --ranks group) take part in
// every agreement but are left out of the combination.
#pragma once

#include <string>
#include <vector>

#include "core/measure/measurement.h"
#include "core/world/world.h"

namespace gpucal {

enum class Combine { max, avg, min };
std::string to_string(Combine how);
Combine parse_combine(const std::string& name);  // throws UsageError naming max, avg, min

// Sample i combined over the ranks r with takes_part[r] (over all ranks when none does).
// Every rank's vector must have the same length; throws std::invalid_argument otherwise.
std::vector<double> combine_samples(const std::vector<std::vector<double>>& per_rank,
                                    const std::vector<bool>& takes_part, Combine how);

class WorldTeam : public Team {
 public:
  WorldTeam(World& world, Combine how, bool takes_part) : world_(world), how_(how), takes_part_(takes_part) {}
  bool all_agree(bool local) override { return world_.all_agree(local); }
  double max_across(double local) override { return world_.max_across(local); }
  // Gathered on rank 0, combined there, broadcast back: two collectives per point.
  std::vector<double> combine(const std::vector<double>& local) override;

 private:
  World& world_;
  Combine how_;
  bool takes_part_;
};

}  // namespace gpucal
