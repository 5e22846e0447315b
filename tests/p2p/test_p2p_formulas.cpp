// bench_p2p's formulas: bytes counted, bandwidth, who talks to whom, link classes, the pair
// matrix, and the validation pattern (poison differs everywhere; one bad byte counts once).
#include <gtest/gtest.h>

#include <vector>

#include "bench_p2p/byte_pattern.h"
#include "bench_p2p/device_ops.h"
#include "bench_p2p/p2p_formulas.h"
#include "core/errors.h"

using namespace gpucal;
using namespace gpucal::p2p;

TEST(P2pFormulas, BytesCounted) {
  EXPECT_EQ(bytes_counted("d2d", 1000), 2000);  // read + write
  EXPECT_EQ(bytes_counted("h2h", 1000), 2000);
  EXPECT_EQ(bytes_counted("bi", 1000), 2000);        // both directions at once
  EXPECT_EQ(bytes_counted("pingpong", 1000), 2000);  // there and back: size / half round trip
  for (const char* d : {"h2d", "d2h", "peer", "uni"}) EXPECT_EQ(bytes_counted(d, 1000), 1000) << d;
  EXPECT_EQ(bytes_counted_rule("d2d"), "read+write");
  EXPECT_EQ(bytes_counted_rule("bi"), "both-directions");
  EXPECT_EQ(bytes_counted_rule("pingpong"), "round-trip");
  EXPECT_EQ(bytes_counted_rule("h2d"), "size");
}

TEST(P2pFormulas, BandwidthIsGigabytesPerSecond) {
  EXPECT_DOUBLE_EQ(bandwidth_gbps(2'000'000'000, 1.0), 2.0);  // GB = 1e9 B
  EXPECT_DOUBLE_EQ(bandwidth_gbps(1 << 20, 1e-3), 1.048576);
  EXPECT_EQ(bandwidth_gbps(100, 0.0), 0.0);
}

TEST(P2pFormulas, Schedules) {
  auto sr = sendrecv_transfers(4, false);
  ASSERT_EQ(sr.size(), 2u);
  EXPECT_EQ(sr[0].src, 0);
  EXPECT_EQ(sr[0].dst, 2);
  EXPECT_EQ(sr[1].src, 1);
  EXPECT_EQ(sr[1].dst, 3);
  EXPECT_EQ(sendrecv_transfers(4, true).size(), 4u);
  auto pp = pingpong_transfers();  // in order: there, then back
  ASSERT_EQ(pp.size(), 2u);
  EXPECT_EQ(pp[0].src, 0);
  EXPECT_EQ(pp[0].dst, 1);
  EXPECT_EQ(pp[1].src, 1);
  EXPECT_EQ(pp[1].dst, 0);
  auto ring = ring_transfers(3);
  ASSERT_EQ(ring.size(), 3u);
  EXPECT_EQ(ring[2].src, 2);
  EXPECT_EQ(ring[2].dst, 0);
  auto pairs = ordered_pairs(4);
  EXPECT_EQ(pairs.size(), 12u);
  for (const auto& t : pairs) EXPECT_NE(t.src, t.dst);
}

TEST(P2pFormulas, RankCountChecks) {
  EXPECT_NO_THROW(check_rank_count("copy", 1));
  EXPECT_NO_THROW(check_rank_count("ring", 3));
  EXPECT_NO_THROW(check_rank_count("sendrecv", 4));
  EXPECT_THROW(check_rank_count("sendrecv", 3), UsageError);
  EXPECT_THROW(check_rank_count("bidir", 5), UsageError);
  EXPECT_THROW(check_rank_count("pairs", 1), UsageError);
  EXPECT_NO_THROW(check_rank_count("pingpong", 3));  // ranks past 1 idle
  EXPECT_THROW(check_rank_count("pingpong", 1), UsageError);
}

TEST(P2pFormulas, RailsPairRankIOfOneNodeWithRankIOfTheOther) {
  // Block placement (srun's default): ranks 0-2 on node 0, 3-5 on node 1.
  const auto block = rail_pairs({0, 0, 0, 1, 1, 1});
  ASSERT_EQ(block.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(block[i].rail, i);
    EXPECT_EQ(block[i].a, i);
    EXPECT_EQ(block[i].b, i + 3);
  }
  // Cyclic placement: the rails are still each node's i-th rank.
  const auto cyclic = rail_pairs({5, 2, 5, 2});
  ASSERT_EQ(cyclic.size(), 2u);
  EXPECT_EQ(cyclic[0].a, 0);
  EXPECT_EQ(cyclic[0].b, 1);
  EXPECT_EQ(cyclic[1].a, 2);
  EXPECT_EQ(cyclic[1].b, 3);
  EXPECT_THROW(rail_pairs({0, 0, 0, 0}), UsageError);        // one node
  EXPECT_THROW(rail_pairs({0, 0, 1}), UsageError);           // 2 and 1
  EXPECT_THROW(rail_pairs({0, 1, 2, 0, 1, 2}), UsageError);  // three nodes
  try {
    rail_pairs({0, 0, 1});
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("this run has 2 and 1"), std::string::npos) << e.what();
  }
}

TEST(P2pFormulas, LinkClasses) {
  EXPECT_EQ(rank_link_class(0, 0), "shm");
  EXPECT_EQ(rank_link_class(0, 1), "network");
  EXPECT_EQ(combine_link_classes({"shm", "shm"}), "shm");
  EXPECT_EQ(combine_link_classes({"shm", "network"}), "mixed");
  EXPECT_EQ(combine_link_classes({}), "unknown");
}

TEST(P2pFormulas, PairMatrix) {
  std::vector<PairResult> r;
  for (int s = 0; s < 3; ++s)
    for (int d = 0; d < 3; ++d)
      if (s != d)
        for (int64_t size : {8, 1024}) r.push_back({s, d, size, 10.0 * s + d + (size == 1024 ? 0.5 : 0), 1.0 + s, s == d ? "" : "shm"});
  r.erase(r.begin());  // pair 0->1 at 8 bytes missing: its latency is null
  auto m = pair_matrix_json(3, r);
  ASSERT_EQ(m["bandwidth_gbps"].size(), 3u);
  ASSERT_EQ(m["latency_us"][0].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(m["bandwidth_gbps"][i][i].is_null());
    EXPECT_TRUE(m["latency_us"][i][i].is_null());
  }
  EXPECT_EQ(m["bandwidth_size_bytes"], 1024);
  EXPECT_EQ(m["latency_size_bytes"], 8);
  EXPECT_DOUBLE_EQ(m["bandwidth_gbps"][2][1].get<double>(), 21.5);  // the largest size
  EXPECT_DOUBLE_EQ(m["latency_us"][2][0].get<double>(), 3.0);       // the smallest size
  EXPECT_TRUE(m["latency_us"][0][1].is_null());
  EXPECT_EQ(m["link_class"][1][2], "shm");
}

TEST(P2pPattern, PoisonDiffersEverywhereAndCountsAreExact) {
  for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{1000}}) {
    std::vector<uint8_t> buf(n);
    host_fill_pattern(buf.data(), n, 42, false);
    EXPECT_EQ(host_count_wrong(buf.data(), n, 42), 0);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(buf[i], pattern_byte(42, i));
    host_fill_pattern(buf.data(), n, 42, true);
    EXPECT_EQ(host_count_wrong(buf.data(), n, 42), static_cast<int64_t>(n));
    host_fill_pattern(buf.data(), n, 42, false);
    buf[n / 2] ^= 1;
    EXPECT_EQ(host_count_wrong(buf.data(), n, 42), 1);
    EXPECT_GT(host_count_wrong(buf.data(), n, 43), 0);  // another sender's data is wrong
  }
  EXPECT_NE(pattern_seed(1, 0, 0), pattern_seed(1, 1, 0));
}

// Two GPUs without peer access: a copy-engine peer copy goes through host memory, and the
// row says so instead of naming the wires.
TEST(P2pFormulas, PeerCopiesWithoutPeerAccessAreStaged) {
  EXPECT_EQ(peer_link_class(false, "nvlink"), "staged");
  EXPECT_EQ(peer_link_class(false, "xgmi"), "staged");
  EXPECT_EQ(peer_link_class(true, "nvlink"), "nvlink");
  EXPECT_EQ(peer_link_class(true, "pcie"), "pcie");
}
