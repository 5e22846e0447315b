#include "app/export/rank_layout.h"

#include <stdexcept>

namespace gpucal::calibration {

RankLayout::RankLayout(const model::ParallelLayout& layout)
    : tp_(layout.tp), cp_(layout.cp), dp_(layout.dp), pp_(layout.pp), ep_(layout.ep) {}

RankPosition RankLayout::position(int64_t rank) const {
  RankPosition p;
  p.tp = rank % tp_;
  rank /= tp_;
  p.cp = rank % cp_;
  rank /= cp_;
  p.dp = rank % dp_;
  p.pp = rank / dp_;
  return p;
}

std::vector<int64_t> RankLayout::members(const std::string& group, int64_t rank) const {
  const RankPosition me = position(rank);
  std::vector<int64_t> out;
  auto add = [&](RankPosition p) { out.push_back(this->rank(p)); };
  const int64_t data = me.cp + cp_ * me.dp;  // the dp x cp index experts are carved from
  auto at_data = [&](int64_t d) {
    RankPosition p = me;
    p.cp = d % cp_;
    p.dp = d / cp_;
    return p;
  };
  if (group == "tp") {
    for (int64_t i = 0; i < tp_; ++i) add({i, me.cp, me.dp, me.pp});
  } else if (group == "cp") {
    for (int64_t i = 0; i < cp_; ++i) add({me.tp, i, me.dp, me.pp});
  } else if (group == "dp") {
    for (int64_t d = 0; d < dp_ * cp_; ++d) add(at_data(d));
  } else if (group == "ep") {
    for (int64_t d = data / ep_ * ep_; d < (data / ep_ + 1) * ep_; ++d) add(at_data(d));
  } else if (group == "expert_dp") {
    for (int64_t d = data % ep_; d < dp_ * cp_; d += ep_) add(at_data(d));
  } else if (group == "embedding") {
    add({me.tp, me.cp, me.dp, 0});
    add({me.tp, me.cp, me.dp, pp_ - 1});
  } else {
    throw std::invalid_argument("no rank group '" + group + "'");
  }
  return out;
}

int64_t RankLayout::group_id(const std::string& group, int64_t rank) {
  auto key = std::make_pair(group, members(group, rank));
  const auto it = ids_.find(key);
  if (it != ids_.end()) return it->second;
  by_id_.push_back(key.second);
  const int64_t id = static_cast<int64_t>(by_id_.size());
  ids_.emplace(std::move(key), id);
  return id;
}

nlohmann::json RankLayout::groups_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t i = 0; i < by_id_.size(); ++i) j[std::to_string(i + 1)] = by_id_[i];
  return j;
}

int64_t RankLayout::stage_peer(int64_t rank, int64_t stage) const {
  RankPosition p = position(rank);
  p.pp = stage;
  return this->rank(p);
}

}  // namespace gpucal::calibration
