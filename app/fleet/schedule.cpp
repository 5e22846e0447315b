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

// Circle method over `order` (node indices), its first `limit` rounds (all when limit < 0); a bye
// slot pads an odd count.
std::vector<Round> circle(const std::vector<int>& order, int limit = -1) {
  const int n = static_cast<int>(order.size());
  const int m = n + (n % 2);  // slot m-1 is a bye when n is odd
  std::vector<Round> rounds;
  for (int r = 0; r < m - 1 && (limit < 0 || r < limit); ++r) {
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

std::string too_many_pairings(const SchedulePattern& pattern, int nodes, long long most) {
  return "--pattern random:" + std::to_string(pattern.pairings) + ": " + std::to_string(nodes) + " nodes have " +
         std::to_string(most) + " distinct pairings at most";
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
      const int most = nodes - 1 + nodes % 2;
      if (pattern.pairings > most) throw std::invalid_argument(too_many_pairings(pattern, nodes, most));
      return circle(order, pattern.pairings);
    }
  }
  return {};
}

long long schedule_pair_count(int nodes, const SchedulePattern& pattern) {
  if (nodes < 2) return 0;
  const long long n = nodes;
  switch (pattern.kind) {
    case SchedulePattern::Kind::round_robin: return n * (n - 1) / 2;
    case SchedulePattern::Kind::ring: return n == 2 ? 1 : n;
    case SchedulePattern::Kind::random: return static_cast<long long>(pattern.pairings) * (n / 2);
  }
  return 0;
}

ScheduleSummary schedule_summary(int nodes, const SchedulePattern& pattern) {
  ScheduleSummary s;
  s.nodes = nodes;
  if (nodes > kExhaustiveNodes) {
    const long long n = nodes;
    if (pattern.kind == SchedulePattern::Kind::random && pattern.pairings > n - 1 + n % 2)
      throw std::invalid_argument(too_many_pairings(pattern, nodes, n - 1 + n % 2));
    s.pairs = schedule_pair_count(nodes, pattern);
    switch (pattern.kind) {
      case SchedulePattern::Kind::round_robin: s.rounds = n - 1 + n % 2; break;
      case SchedulePattern::Kind::ring: s.rounds = n % 2 == 0 ? 2 : 3; break;
      case SchedulePattern::Kind::random: s.rounds = pattern.pairings; break;
    }
    s.max_per_round = n / 2;
    s.all_pairs = pattern.kind == SchedulePattern::Kind::round_robin;
    s.checked = false;
    return s;
  }
  const std::vector<Round> rounds = link_schedule(nodes, pattern);
  const long long n = nodes;
  std::vector<bool> seen(static_cast<std::size_t>(n * (n - 1) / 2), false);  // pair (a<b) at a*(2n-a-1)/2 + b-a-1
  std::vector<long long> busy_in(static_cast<std::size_t>(n), -1);
  long long distinct = 0;
  s.rounds = static_cast<long long>(rounds.size());
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    for (const NodePair& p : rounds[r].pairs) {
      const long long a = p.a, b = p.b;
      const auto at = static_cast<std::size_t>(a * (2 * n - a - 1) / 2 + b - a - 1);
      if (!seen[at]) ++distinct;
      seen[at] = true;
      for (const int node : {p.a, p.b}) {
        auto& last = busy_in[static_cast<std::size_t>(node)];
        s.one_pair_per_node = s.one_pair_per_node && last != static_cast<long long>(r);
        last = static_cast<long long>(r);
      }
    }
    s.pairs += static_cast<long long>(rounds[r].pairs.size());
    s.max_per_round = std::max(s.max_per_round, static_cast<long long>(rounds[r].pairs.size()));
  }
  s.all_pairs = distinct == n * (n - 1) / 2;
  return s;
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
