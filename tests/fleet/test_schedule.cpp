// The link phase's rounds (app/fleet/schedule.h): every property the fleet run relies on, for
// node counts from 1 to 65, odd and even.
#include <gtest/gtest.h>

#include <set>

#include "app/fleet/schedule.h"

namespace gpucal::fleet {
namespace {

using PairSet = std::set<std::pair<int, int>>;

// Each node in at most one pair of a round, idle nodes in none, and every node accounted for.
void expect_rounds_are_matchings(int n, const std::vector<Round>& rounds) {
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    std::multiset<int> seen;
    for (const NodePair& p : rounds[r].pairs) {
      EXPECT_LT(p.a, p.b);
      EXPECT_GE(p.a, 0);
      EXPECT_LT(p.b, n);
      seen.insert(p.a);
      seen.insert(p.b);
    }
    for (int i : rounds[r].idle) seen.insert(i);
    for (int i = 0; i < n; ++i) EXPECT_EQ(seen.count(i), 1u) << "node " << i << " in round " << r << " of " << n;
  }
}

PairSet pairs_of(const std::vector<Round>& rounds, int& total) {
  PairSet all;
  total = 0;
  for (const Round& r : rounds)
    for (const NodePair& p : r.pairs) all.insert({p.a, p.b}), ++total;
  return all;
}

TEST(Schedule, RoundRobinCoversEveryPairOnceInNMinusOneRoundsOrNForOdd) {
  for (int n = 1; n <= 65; ++n) {
    const auto rounds = link_schedule(n, {});
    expect_rounds_are_matchings(n, rounds);
    int total = 0;
    const PairSet all = pairs_of(rounds, total);
    EXPECT_EQ(static_cast<int>(all.size()), n * (n - 1) / 2) << n;
    EXPECT_EQ(total, n * (n - 1) / 2) << "a pair measured twice, n = " << n;
    EXPECT_EQ(static_cast<int>(rounds.size()), n < 2 ? 0 : (n % 2 == 0 ? n - 1 : n)) << n;
    for (const Round& r : rounds) {
      EXPECT_EQ(static_cast<int>(r.pairs.size()), n / 2) << "a round leaves pairs unmeasured, n = " << n;
      EXPECT_EQ(static_cast<int>(r.idle.size()), n % 2);
    }
  }
}

TEST(Schedule, OddCountsLeaveEachNodeIdleExactlyOnce) {
  for (int n : {3, 5, 7, 63}) {
    std::multiset<int> idle;
    for (const Round& r : link_schedule(n, {})) idle.insert(r.idle.begin(), r.idle.end());
    for (int i = 0; i < n; ++i) EXPECT_EQ(idle.count(i), 1u) << "node " << i << " of " << n;
  }
}

TEST(Schedule, RingMeasuresEveryNeighbourInTwoRoundsOrThreeForOdd) {
  SchedulePattern ring;
  ring.kind = SchedulePattern::Kind::ring;
  for (int n = 2; n <= 33; ++n) {
    const auto rounds = link_schedule(n, ring);
    expect_rounds_are_matchings(n, rounds);
    int total = 0;
    const PairSet all = pairs_of(rounds, total);
    const int edges = n == 2 ? 1 : n;
    EXPECT_EQ(total, edges) << n;
    for (int i = 0; i < n && n > 2; ++i) EXPECT_TRUE(all.count({std::min(i, (i + 1) % n), std::max(i, (i + 1) % n)})) << i;
    EXPECT_EQ(static_cast<int>(rounds.size()), n == 2 ? 1 : (n % 2 == 0 ? 2 : 3)) << n;
  }
}

TEST(Schedule, RandomPairingsAreDistinctPerfectMatchingsAndSeeded) {
  SchedulePattern random = parse_schedule_pattern("random:3");
  random.seed = 7;
  for (int n : {4, 8, 9, 64}) {
    const auto rounds = link_schedule(n, random);
    ASSERT_EQ(rounds.size(), 3u);
    expect_rounds_are_matchings(n, rounds);
    int total = 0;
    EXPECT_EQ(static_cast<int>(pairs_of(rounds, total).size()), total) << "a pair twice, n = " << n;
  }
  int total = 0;
  EXPECT_EQ(pairs_of(link_schedule(16, random), total), pairs_of(link_schedule(16, random), total));
  SchedulePattern other = random;
  other.seed = 8;
  EXPECT_NE(pairs_of(link_schedule(16, random), total), pairs_of(link_schedule(16, other), total));
}

TEST(Schedule, RoundsGrowLinearlyWithTheNodeCount) {
  for (int n : {4, 8, 16, 64}) {
    const auto rounds = link_schedule(n, {});
    EXPECT_EQ(static_cast<int>(rounds.size()), n - 1);
    EXPECT_EQ(static_cast<int>(rounds[0].pairs.size()), n / 2);
  }
}

TEST(Schedule, BadPatternsAndCountsAreRefused) {
  EXPECT_THROW(parse_schedule_pattern("all"), std::invalid_argument);
  EXPECT_THROW(parse_schedule_pattern("random:0"), std::invalid_argument);
  EXPECT_THROW(parse_schedule_pattern("random:x"), std::invalid_argument);
  EXPECT_THROW(link_schedule(0, {}), std::invalid_argument);
  EXPECT_THROW(link_schedule(4, parse_schedule_pattern("random:4")), std::invalid_argument);  // 3 pairings exist
  EXPECT_EQ(to_string(parse_schedule_pattern("random:5")), "random:5");
}

TEST(Schedule, DisjointGroupsPartitionTheNodes) {
  const auto groups = disjoint_groups(10, 4);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(groups[2], (std::vector<int>{8, 9}));
  EXPECT_EQ(disjoint_groups(9, 4).size(), 2u);  // a single leftover node forms no group
  EXPECT_THROW(disjoint_groups(8, 1), std::invalid_argument);
}

TEST(Schedule, FormatNamesTheNodes) {
  const std::string text = format_schedule(link_schedule(3, {}), {"a", "b", "c"});
  EXPECT_NE(text.find("round 1: b-c  (idle: a)"), std::string::npos) << text;
  EXPECT_NE(text.find("round 3:"), std::string::npos);
}


// The summary's closed form above the exhaustive limit gives the counts the built rounds give.
TEST(Schedule, SummaryCountsAreTheBuiltRoundsCountsAndLargeFleetsNeedNoRounds) {
  for (const char* text : {"round-robin", "ring", "random:3"})
    for (int n : {2, 3, 4, 7, 16, 65, 1000}) {
      const SchedulePattern pattern = parse_schedule_pattern(text);
      const bool random = pattern.kind == SchedulePattern::Kind::random;
      if (random && n == 2) continue;  // one pairing exists
      const auto rounds = link_schedule(n, pattern);
      const ScheduleSummary s = schedule_summary(n, pattern);
      long long pairs = 0;
      for (const Round& r : rounds) pairs += static_cast<long long>(r.pairs.size());
      EXPECT_EQ(s.rounds, static_cast<long long>(rounds.size())) << text << " " << n;
      EXPECT_EQ(s.pairs, pairs) << text << " " << n;
      EXPECT_EQ(schedule_pair_count(n, pattern), pairs) << text << " " << n;
      EXPECT_TRUE(s.checked && s.one_pair_per_node);
      const bool every_pairing = random ? pattern.pairings == n - 1 + n % 2 : pattern.kind == SchedulePattern::Kind::round_robin;
      EXPECT_EQ(s.all_pairs, every_pairing || (pattern.kind == SchedulePattern::Kind::ring && n <= 3)) << text << " " << n;
    }
  const ScheduleSummary big = schedule_summary(100000, {});
  EXPECT_FALSE(big.checked);
  EXPECT_EQ(big.rounds, 99999);
  EXPECT_EQ(big.pairs, 4999950000LL);
  EXPECT_EQ(big.max_per_round, 50000);
  EXPECT_TRUE(big.all_pairs);
  EXPECT_EQ(schedule_summary(100001, {}).rounds, 100001);
  EXPECT_THROW(schedule_summary(100000, parse_schedule_pattern("random:100000")), std::invalid_argument);
  EXPECT_EQ(schedule_summary(100000, parse_schedule_pattern("random:4")).pairs, 200000);
}

}  // namespace
}  // namespace gpucal::fleet
