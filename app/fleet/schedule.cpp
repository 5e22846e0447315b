#include "app/fleet/schedule.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

#include "core/driver/flag_checks.h"

namespace gpucal::fleet {

SchedulePattern parse_schedule_pattern(const std::string& text) {
  SchedulePattern p;
  if (text == "round-robin") return p;
  if (text == "ring") {
    p.kind = SchedulePattern::Kind::ring;
    return p;
  }
  if (text.rfind("random:", 0) == 0) {
    const std::string k = text.substr(7);
    if (const std::string why = check_number_text(k, true, {.min = 1, .max = 1 << 20}); !why.empty())
      throw std::invalid_argument("--pattern random:K: K " + why);
    p.kind = SchedulePattern::Kind::random;
    p.pairings = std::stoi(k);
    return p;
  }
  throw std::invalid_argument("--pattern: expected round-robin, ring or random:K, got '" + text + "'");
}

std::string to_string(const SchedulePattern& p) {
  switch (p.kind) {
    case SchedulePattern::Kind::round_robin: return "round-robin";
    case SchedulePattern::Kind::ring: return "ring";
    case SchedulePattern::Kind::random: return "random:" + std::to_string(p.pairings);
  }
  return "";
}

namespace {

NodePair ordered(int x, int y) { return x < y ? NodePair{x, y} : NodePair{y, x}; }

// Circle method over `order` (node indices); a bye slot pads an odd count.
std::vector<Round> circle(const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  const int m = n + (n % 2);  // slot m-1 is a bye when n is odd
  std::vector<Round> rounds;
  for (int r = 0; r < m - 1; ++r) {
    Round round;
    auto add = [&](int slot_x, int slot_y) {
      const bool bye_x = slot_x >= n, bye_y = slot_y >= n;
      if (bye_x || bye_y) {
        round.idle.push_back(order[static_cast<std::size_t>(bye_x ? slot_y : slot_x)]);
        return;
      }
      round.pairs.push_back(ordered(order[static_cast<std::size_t>(slot_x)], order[static_cast<std::size_t>(slot_y)]));
    };
    add(m - 1, r);
    for (int i = 1; i < m / 2; ++i) add((r + i) % (m - 1), (r - i + m - 1) % (m - 1));
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<Round> ring(int n) {
  if (n < 2) return {};
  if (n == 2) return {Round{{{0, 1}}, {}}};
  std::vector<Round> rounds(n % 2 == 0 ? 2 : 3);
  for (int i = 0; i < n; ++i) {
    const int j = (i + 1) % n;
    std::size_t r = static_cast<std::size_t>(i % 2);
    if (n % 2 == 1 && i == n - 1) r = 2;  // an odd ring's closing edge needs a third round
    rounds[r].pairs.push_back(ordered(i, j));
  }
  for (Round& round : rounds) {
    std::vector<bool> busy(static_cast<std::size_t>(n), false);
    for (const NodePair& p : round.pairs) busy[static_cast<std::size_t>(p.a)] = busy[static_cast<std::size_t>(p.b)] = true;
    for (int i = 0; i < n; ++i)
      if (!busy[static_cast<std::size_t>(i)]) round.idle.push_back(i);
  }
  return rounds;
}

}  // namespace

std::vector<Round> link_schedule(int nodes, const SchedulePattern& pattern) {
  if (nodes < 1) throw std::invalid_argument("--nodes: expected at least 1, got " + std::to_string(nodes));
  if (nodes < 2) return {};  // no pair
  std::vector<int> order(static_cast<std::size_t>(nodes));
  std::iota(order.begin(), order.end(), 0);
  switch (pattern.kind) {
    case SchedulePattern::Kind::round_robin: return circle(order);
    case SchedulePattern::Kind::ring: return ring(nodes);
    case SchedulePattern::Kind::random: {
      std::mt19937_64 rng(pattern.seed);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<Round> all = circle(order);
      if (pattern.pairings > static_cast<int>(all.size()))
        throw std::invalid_argument("--pattern random:" + std::to_string(pattern.pairings) + ": " + std::to_string(nodes) +
                                    " nodes have " + std::to_string(all.size()) + " distinct pairings at most");
      all.resize(static_cast<std::size_t>(pattern.pairings));
      return all;
    }
  }
  return {};
}

std::vector<std::vector<int>> disjoint_groups(int nodes, int group_size) {
  if (group_size < 2) throw std::invalid_argument("--groups: a group has at least 2 nodes, got " + std::to_string(group_size));
  std::vector<std::vector<int>> groups;
  for (int start = 0; start + 1 < nodes; start += group_size) {
    std::vector<int> g;
    for (int i = start; i < std::min(nodes, start + group_size); ++i) g.push_back(i);
    groups.push_back(std::move(g));
  }
  return groups;
}

std::string format_schedule(const std::vector<Round>& rounds, const std::vector<std::string>& names) {
  auto name = [&](int i) {
    return static_cast<std::size_t>(i) < names.size() ? names[static_cast<std::size_t>(i)] : std::to_string(i);
  };
  std::ostringstream out;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    out << "round " << r + 1 << ":";
    for (const NodePair& p : rounds[r].pairs) out << " " << name(p.a) << "-" << name(p.b);
    if (!rounds[r].idle.empty()) {
      out << "  (idle:";
      for (int i : rounds[r].idle) out << " " << name(i);
      out << ")";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace gpucal::fleet
