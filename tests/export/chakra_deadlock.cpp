// simulate_for_deadlock (tests/export/chakra_checks.h): ASTRA-sim's issue rules at zero time.
#include <map>
#include <set>
#include <tuple>

#include "tests/export/chakra_checks.h"

namespace gpucal::calibration::testing {

namespace pb = ChakraProtoMsg;

namespace {

using MessageKey = std::tuple<int32_t, int32_t, int32_t, int64_t>;  // src, dst, tag, size

MessageKey message_key(const pb::Node& n) {
  return {find_attr(n, "comm_src")->int32_val(), find_attr(n, "comm_dst")->int32_val(),
          find_attr(n, "comm_tag")->int32_val(), find_attr(n, "comm_size")->int64_val()};
}

struct Rank {
  const DecodedTrace* trace = nullptr;
  std::vector<int64_t> waiting_on;               // unfinished dependencies per node
  std::vector<std::vector<std::size_t>> children;
  std::set<std::pair<uint64_t, std::size_t>> ready;  // (id, position): issued lowest id first
  std::size_t finished = 0;
  bool comm_busy = false;                          // one collective or send in flight
  std::map<std::string, int64_t> issued_in_group;  // collectives issued per group
};

struct World {
  std::vector<Rank> ranks;
  std::map<std::pair<std::string, int64_t>, std::vector<std::pair<std::size_t, std::size_t>>> instances;
  std::map<MessageKey, int64_t> sent;
  std::vector<std::pair<std::size_t, std::size_t>> receiving;  // (rank, position)
  const nlohmann::json& groups;

  void finish(std::size_t r, std::size_t pos) {
    Rank& rank = ranks[r];
    ++rank.finished;
    for (std::size_t c : rank.children[pos])
      if (--rank.waiting_on[c] == 0) rank.ready.insert({rank.trace->nodes[c].id(), c});
  }

  // Issues what rank r can; true when anything happened.
  bool issue(std::size_t r) {
    Rank& rank = ranks[r];
    bool progress = false;
    for (const auto& entry : std::set<std::pair<uint64_t, std::size_t>>(rank.ready)) {
      const std::size_t pos = entry.second;
      const pb::Node& n = rank.trace->nodes[pos];
      const bool slot = n.type() == pb::COMM_COLL_NODE || n.type() == pb::COMM_SEND_NODE;
      if (slot && rank.comm_busy) continue;
      rank.ready.erase(entry);
      progress = true;
      if (n.type() == pb::COMM_COLL_NODE) {
        const std::string g = find_attr(n, "pg_name")->string_val();
        auto& members = instances[{g, rank.issued_in_group[g]++}];
        members.emplace_back(r, pos);
        rank.comm_busy = true;
        if (members.size() == groups[g].size())
          for (const auto& [mr, mpos] : members) ranks[mr].comm_busy = false, finish(mr, mpos);
      } else if (n.type() == pb::COMM_SEND_NODE) {
        ++sent[message_key(n)];
        finish(r, pos);
      } else if (n.type() == pb::COMM_RECV_NODE) {
        receiving.emplace_back(r, pos);
      } else {
        finish(r, pos);
      }
    }
    return progress;
  }

  bool deliver() {
    bool progress = false;
    for (auto it = receiving.begin(); it != receiving.end();) {
      auto& count = sent[message_key(ranks[it->first].trace->nodes[it->second])];
      if (count > 0) {
        --count;
        finish(it->first, it->second);
        it = receiving.erase(it);
        progress = true;
      } else {
        ++it;
      }
    }
    return progress;
  }
};

}  // namespace

std::vector<std::string> simulate_for_deadlock(const std::vector<DecodedTrace>& traces, const nlohmann::json& groups) {
  World w{.groups = groups};
  for (const auto& t : traces) {
    Rank r;
    r.trace = &t;
    std::map<uint64_t, std::size_t> at;
    for (std::size_t i = 0; i < t.nodes.size(); ++i) at[t.nodes[i].id()] = i;
    r.waiting_on.assign(t.nodes.size(), 0);
    r.children.resize(t.nodes.size());
    for (std::size_t i = 0; i < t.nodes.size(); ++i)
      for (auto d : t.nodes[i].data_deps()) r.children[at.at(d)].push_back(i), ++r.waiting_on[i];
    for (std::size_t i = 0; i < t.nodes.size(); ++i)
      if (r.waiting_on[i] == 0) r.ready.insert({t.nodes[i].id(), i});
    w.ranks.push_back(std::move(r));
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < w.ranks.size(); ++r) progress = w.issue(r) || progress;
    progress = w.deliver() || progress;
  }
  std::vector<std::string> errors;
  for (const auto& r : w.ranks)
    if (r.finished != r.trace->nodes.size())
      errors.push_back("rank " + std::to_string(r.trace->rank) + ": " +
                       std::to_string(r.trace->nodes.size() - r.finished) + " node(s) never finish");
  return errors;
}

}  // namespace gpucal::calibration::testing
