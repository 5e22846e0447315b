// Where every rank of a layout sits and which ranks each of its messages joins, for the
// workload exports (one trace per rank). Megatron-LM's rank order, as the communication model
// places groups on nodes (app/predict/op_cost.h group_nnodes): tp fastest, then cp, then dp,
// then pp; the expert-parallel group is ep consecutive ranks of the dp x cp "data" index, the
// expert data-parallel group those of that index equal modulo ep.
//   rank = tp_i + tp x (cp_i + cp x (dp_i + dp x pp_i))
// Groups are named as the derivation names them (core/model/workload.h CommShape::group): tp,
// cp, dp (dp x cp ranks), ep, expert_dp, embedding (the first and last stage's ranks of the
// same tp, cp, dp position). Each distinct group gets an id from 1 (ASTRA-sim reads id 0 and
// "" as "every rank").
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/model/layout.h"

namespace gpucal::calibration {

struct RankPosition {
  int64_t tp = 0, cp = 0, dp = 0, pp = 0;
};

class RankLayout {
 public:
  explicit RankLayout(const model::ParallelLayout& layout);

  int64_t world() const { return tp_ * cp_ * dp_ * pp_; }
  int64_t rank(const RankPosition& p) const { return p.tp + tp_ * (p.cp + cp_ * (p.dp + dp_ * p.pp)); }
  RankPosition position(int64_t rank) const;
  // The ranks of `group` (a CommShape::group name) that `rank` belongs to, ascending;
  // std::invalid_argument for a name no derivation uses.
  std::vector<int64_t> members(const std::string& group, int64_t rank) const;
  // The group's id (from 1), one per name and member set, numbered in the order first asked for.
  int64_t group_id(const std::string& group, int64_t rank);
  // {"<id>": [ranks]} for every group numbered so far: ASTRA-sim's communicator-group file.
  nlohmann::json groups_json() const;
  // The rank of the same tp, cp, dp position on pipeline stage `stage` (pipeline neighbours,
  // and the interleaved schedule's wrap from the last stage to the first).
  int64_t stage_peer(int64_t rank, int64_t stage) const;

 private:
  int64_t tp_, cp_, dp_, pp_, ep_;
  std::map<std::pair<std::string, std::vector<int64_t>>, int64_t> ids_;  // (name, members) -> id
  std::vector<std::vector<int64_t>> by_id_;      // id - 1 -> members
};

}  // namespace gpucal::calibration
