// Which pairs of nodes the link phase measures, in rounds where every node is in at most one
// pair (exactly one when the count is even): the pairs of a round run at once, so a cluster's
// links take O(N) rounds instead of O(N^2) serial runs.
//   round-robin  every pair once, in N - 1 rounds (N rounds for odd N: each node sits out once);
//                the circle method: node N-1 stays, the others rotate one place per round
//   ring         neighbours i, i+1 (mod N): 2 rounds for even N, 3 for odd (1 for N = 2)
//   random:K     K rounds of the round-robin over a seeded random order of the nodes: K distinct
//                pairings, no pair twice
// Also the disjoint groups the fleet phase measures concurrently (nccl-tests' NCCL_TESTS_SPLIT).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace gpucal::fleet {

struct NodePair {
  int a = 0, b = 0;  // node indices, a < b
};

struct Round {
  std::vector<NodePair> pairs;
  std::vector<int> idle;  // nodes in no pair this round
};

struct SchedulePattern {
  enum class Kind { round_robin, ring, random } kind = Kind::round_robin;
  int pairings = 0;    // random: K
  uint64_t seed = 1;   // random: the order's seed
};

// "round-robin", "ring", "random:K"; throws std::invalid_argument on anything else.
SchedulePattern parse_schedule_pattern(const std::string& text);
std::string to_string(const SchedulePattern& pattern);

// Throws std::invalid_argument for nodes < 1, or random K outside 1..rounds of the round-robin.
std::vector<Round> link_schedule(int nodes, const SchedulePattern& pattern);

// What `fleet schedule --summary` prints for N nodes. Up to kExhaustiveNodes the rounds are built
// and checked (each pair distinct, every pair covered, one pair per node per round; the rounds
// take 64 MiB at the limit); above it the counts come from the pattern's closed form, the checks
// from its construction, and `checked` says so: 100000 nodes round-robin are 5e9 pairs.
struct ScheduleSummary {
  int nodes = 0;
  long long rounds = 0, pairs = 0, max_per_round = 0;
  bool all_pairs = false, one_pair_per_node = true, checked = true;
};
constexpr int kExhaustiveNodes = 4096;
ScheduleSummary schedule_summary(int nodes, const SchedulePattern& pattern);
// The pairs link_schedule(nodes, pattern) holds, without building it (for refusing a print).
long long schedule_pair_count(int nodes, const SchedulePattern& pattern);

// Consecutive groups of `group_size` nodes; a remainder of 2 or more nodes is a smaller last
// group, a single node is left out. Throws for group_size < 2.
std::vector<std::vector<int>> disjoint_groups(int nodes, int group_size);

// The schedule as text: one line per round with its pairs (node names when given) and idle nodes.
std::string format_schedule(const std::vector<Round>& rounds, const std::vector<std::string>& names);

}  // namespace gpucal::fleet
