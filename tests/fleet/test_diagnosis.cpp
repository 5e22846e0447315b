// Which nodes and links the diagnosis names (app/history/diagnosis.h), on fleets built in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/history/diagnosis.h"
#include "app/fleet/drain.h"

namespace gpucal::fleet {
namespace {

Metric metric(const std::string& id, double value) {
  const MetricKind k = metric_kind(id);
  return Metric{id, value, k.unit, k.better, "p"};
}

FleetDir fleet_of(const std::map<std::string, std::map<std::string, double>>& nodes,
                  const std::map<std::pair<std::string, std::string>, std::map<std::string, double>>& pairs = {}) {
  FleetDir f;
  f.path = "synthetic";
  for (const auto& [name, metrics] : nodes) {
    NodeResults n;
    n.name = name;
    for (const auto& [id, v] : metrics) n.metrics[id] = metric(id, v);
    f.nodes.push_back(n);
  }
  for (const auto& [ab, metrics] : pairs) {
    PairResults p{ab.first, ab.second, {}, "ok", ""};
    for (const auto& [id, v] : metrics) p.metrics[id] = metric(id, v);
    f.pairs.push_back(p);
  }
  return f;
}

DiagnosisOptions no_expectations() {
  DiagnosisOptions o;
  o.expect = "none";
  return o;
}

TEST(Diagnosis, NamesTheSlowNodeWithMetricValueAndMedian) {
  const FleetDir f = fleet_of({{"n1", {{"gemm_bf16_tflops", 790}}}, {"n2", {{"gemm_bf16_tflops", 795}}},
                               {"n3", {{"gemm_bf16_tflops", 600}}}, {"n4", {{"gemm_bf16_tflops", 788}}},
                               {"n5", {{"gemm_bf16_tflops", 801}}}});
  const Diagnosis d = diagnose(f, no_expectations());
  ASSERT_EQ(d.suspects.size(), 1u);
  EXPECT_EQ(d.suspects[0].subject, "n3");
  EXPECT_EQ(d.suspects[0].metric, "gemm_bf16_tflops");
  EXPECT_DOUBLE_EQ(*d.suspects[0].value, 600);
  EXPECT_DOUBLE_EQ(*d.suspects[0].median, 790);
  EXPECT_NE(d.suspects[0].reason.find("below the fleet median"), std::string::npos) << d.suspects[0].reason;
}

TEST(Diagnosis, SmallDifferencesOnAQuietFleetAreNotSuspects) {
  // MAD 0: the 3% slower node has an infinite z, but is within the factor 0.9.
  const FleetDir f = fleet_of({{"a", {{"hbm_copy_gbps", 3000}}}, {"b", {{"hbm_copy_gbps", 3000}}},
                               {"c", {{"hbm_copy_gbps", 3000}}}, {"d", {{"hbm_copy_gbps", 2910}}}});
  EXPECT_TRUE(diagnose(f, no_expectations()).suspects.empty());
}

// A fleet of oversubscribed CPU nodes (tests/fleet/planted_faults.sh): the healthy nodes spread
// from 0.65 to 1.8 times the median, so the MAD is wide and the node capped at 2% of a core, at a
// twentieth of the median, scores a robust z of only -2.6. The gross factor names it; the spread
// alone (1.8x) does not reach it.
TEST(Diagnosis, ANodeFarBelowANoisyFleetIsNamedByTheGrossFactor) {
  const FleetDir f = fleet_of({{"n1", {{"hbm_copy_gbps", 3.16}}}, {"n2", {{"hbm_copy_gbps", 6.03}}},
                               {"n3", {{"hbm_copy_gbps", 0.33}}}, {"n4", {{"hbm_copy_gbps", 7.36}}},
                               {"n5", {{"hbm_copy_gbps", 5.08}}}, {"n6", {{"hbm_copy_gbps", 3.18}}}});
  DiagnosisOptions o = no_expectations();
  o.min_deviation = 0.5;
  const Diagnosis d = diagnose(f, o);
  ASSERT_EQ(d.suspects.size(), 1u);
  EXPECT_EQ(d.suspects[0].subject, "n3");
  EXPECT_NE(d.suspects[0].reason.find("beyond the gross factor 5"), std::string::npos) << d.suspects[0].reason;
  const auto& row = d.node_tables.at(0).rows.at(0);
  EXPECT_EQ(row.subject, "n3");
  EXPECT_GT(row.z, -3.5);  // the z alone would not name it
  EXPECT_TRUE(row.gross);
  o.gross_factor = 0;  // off: only the z rule
  EXPECT_TRUE(diagnose(f, o).suspects.empty());
  o.gross_factor = 20;  // 3.16..3.18 median 4.1: n3 is 12.5 times lower, within 20
  EXPECT_TRUE(diagnose(f, o).suspects.empty());
}

TEST(Diagnosis, TheGrossFactorAppliesToLatenciesUpwardAndNeedsAFleet) {
  DiagnosisOptions o = no_expectations();
  o.z_threshold = 1e6;  // the z rule off: only the gross factor can name
  const FleetDir f = fleet_of({{"a", {{"internode_latency_us", 10}}}, {"b", {{"internode_latency_us", 12}}},
                               {"c", {{"internode_latency_us", 61}}}, {"d", {{"internode_latency_us", 11}}}});
  const Diagnosis d = diagnose(f, o);
  ASSERT_EQ(d.suspects.size(), 1u);
  EXPECT_EQ(d.suspects[0].subject, "c");
  // Two nodes are no fleet (min_count 3): no ranking, the gross factor included.
  const FleetDir two = fleet_of({{"a", {{"internode_latency_us", 10}}}, {"c", {{"internode_latency_us", 100}}}});
  EXPECT_TRUE(diagnose(two, o).suspects.empty());
}

TEST(Diagnosis, HighLatencyIsWorse) {
  const FleetDir f = fleet_of({{"a", {{"p2p_latency_us", 5.0}}}, {"b", {{"p2p_latency_us", 5.2}}},
                               {"c", {{"p2p_latency_us", 4.9}}}, {"d", {{"p2p_latency_us", 12}}},
                               {"e", {{"p2p_latency_us", 2}}}});
  const Diagnosis d = diagnose(f, no_expectations());
  ASSERT_EQ(d.suspect_nodes(), std::vector<std::string>{"d"});  // fast "e" is no suspect
}

std::map<std::pair<std::string, std::string>, std::map<std::string, double>> all_pairs(
    const std::vector<std::string>& nodes, const std::function<double(const std::string&, const std::string&)>& value) {
  std::map<std::pair<std::string, std::string>, std::map<std::string, double>> pairs;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t j = i + 1; j < nodes.size(); ++j) pairs[{nodes[i], nodes[j]}]["internode_bw_gbps"] = value(nodes[i], nodes[j]);
  return pairs;
}

TEST(Diagnosis, ANodeWithAllPairsSlowIsANodeFaultNotLinkFaults) {
  const std::vector<std::string> names{"a", "b", "c", "d", "e"};
  const auto pairs = all_pairs(names, [](const std::string& x, const std::string& y) {
    return (x == "c" || y == "c") ? 10.0 : 45.0 + static_cast<double>(x[0] - 'a') * 0.1;
  });
  std::map<std::string, std::map<std::string, double>> nodes;
  for (const auto& n : names) nodes[n] = {};
  const Diagnosis d = diagnose(fleet_of(nodes, pairs), no_expectations());
  EXPECT_EQ(d.suspect_nodes(), std::vector<std::string>{"c"});
  EXPECT_TRUE(d.suspect_links().empty());
  ASSERT_FALSE(d.suspects.empty());
  EXPECT_EQ(d.suspects[0].kind, "node links");
  EXPECT_NE(d.suspects[0].reason.find("all 4 of its pairs slow"), std::string::npos) << d.suspects[0].reason;
}

// Rails: node c's rail 1 (its second rank: GPU 1 and its NIC) is slow with every peer while its
// rail 0 and every other node's rails are at the fleet's figure: c is named for rail 1, once, and
// no link nor other node; a drain says which rail.
TEST(Diagnosis, ANodeWhoseOneRailIsSlowWithEveryPeerIsNamedForThatRail) {
  const std::vector<std::string> names{"a", "b", "c", "d", "e"};
  auto rail = [](int i) {
    return [i](const std::string& x, const std::string& y) {
      return (i == 1 && (x == "c" || y == "c")) ? 3.0 : 24.0 + static_cast<double>(x[0] - 'a') * 0.1 + i;
    };
  };
  auto pairs = all_pairs(names, rail(0));
  const auto rail1 = all_pairs(names, rail(1));
  std::map<std::pair<std::string, std::string>, std::map<std::string, double>> both;
  for (const auto& [ab, m] : pairs) both[ab]["rail0_bw_gbps"] = m.begin()->second;
  for (const auto& [ab, m] : rail1) both[ab]["rail1_bw_gbps"] = m.begin()->second;
  std::map<std::string, std::map<std::string, double>> nodes;
  for (const auto& n : names) nodes[n] = {};
  const Diagnosis d = diagnose(fleet_of(nodes, both), no_expectations());
  EXPECT_EQ(d.suspect_nodes(), std::vector<std::string>{"c"});
  EXPECT_TRUE(d.suspect_links().empty());
  ASSERT_EQ(d.suspects.size(), 1u);
  EXPECT_EQ(d.suspects[0].kind, "rail");
  EXPECT_EQ(d.suspects[0].metric, "rail1_bw_gbps");
  EXPECT_NE(d.suspects[0].reason.find("rail 1 (its rank 1 on the node: GPU 1 and its NIC): all 4 of its pairs slow"),
            std::string::npos)
      << d.suspects[0].reason;
  const auto a = drain_actions(d, "night", "scontrol");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].reason, "gpucal fleet night: rail 1 slow (rail1_bw_gbps)");
  EXPECT_EQ(rail_of("rail12_bw_gbps"), 12);
  EXPECT_EQ(rail_of("internode_bw_gbps"), -1);
  EXPECT_TRUE(is_metric_id("rail0_bw_gbps"));
  EXPECT_FALSE(is_metric_id("rail01_bw_gbps"));
}

// Three nodes: a node's best pair counts for both its ends, so two of the three capacities tie and
// the MAD is 0. A node 10% below is no infinite-z suspect; one five times below is named (gross).
TEST(Diagnosis, ThreeNodesTiedCapacitiesNameOnlyAGrossNode) {
  const std::vector<std::string> names{"a", "b", "c"};
  std::map<std::string, std::map<std::string, double>> nodes;
  for (const auto& n : names) nodes[n] = {};
  const auto near = all_pairs(names, [](const std::string& x, const std::string& y) { return x == "a" && y == "b" ? 10.0 : 9.0; });
  const Diagnosis quiet = diagnose(fleet_of(nodes, near), no_expectations());
  EXPECT_TRUE(quiet.suspects.empty()) << quiet.suspects[0].subject << ": " << quiet.suspects[0].reason;
  const auto far = all_pairs(names, [](const std::string& x, const std::string& y) { return x == "a" && y == "b" ? 10.0 : 1.5; });
  const Diagnosis slow = diagnose(fleet_of(nodes, far), no_expectations());
  EXPECT_EQ(slow.suspect_nodes(), std::vector<std::string>{"c"});
  EXPECT_TRUE(slow.suspect_links().empty());
}

TEST(Diagnosis, OneSlowPairIsALinkFault) {
  const std::vector<std::string> names{"a", "b", "c", "d"};
  const auto pairs = all_pairs(names, [](const std::string& x, const std::string& y) {
    return (x == "b" && y == "d") ? 12.0 : 45.0;
  });
  std::map<std::string, std::map<std::string, double>> nodes;
  for (const auto& n : names) nodes[n] = {};
  const Diagnosis d = diagnose(fleet_of(nodes, pairs), no_expectations());
  EXPECT_TRUE(d.suspect_nodes().empty());
  EXPECT_EQ(d.suspect_links(), std::vector<std::string>{"b--d"});
}

// A node already named (here a slow GEMM: a CPU held back slows its links too) explains its own
// slow pair: the pair is a note, not a link fault that would send someone to a cable.
TEST(Diagnosis, ASlowPairOfANamedNodeIsANoteNotALinkFault) {
  const std::vector<std::string> names{"a", "b", "c", "d", "e"};
  const auto pairs = all_pairs(names, [](const std::string& x, const std::string& y) {
    return (x == "b" && y == "c") ? 12.0 : 45.0 + static_cast<double>(x[0] - 'a') * 0.1;
  });
  std::map<std::string, std::map<std::string, double>> nodes;
  for (const auto& n : names) nodes[n] = {{"gemm_fp32_tflops", n == "c" ? 0.01 : 1.0 + static_cast<double>(n[0] - 'a') * 0.01}};
  const Diagnosis d = diagnose(fleet_of(nodes, pairs), no_expectations());
  EXPECT_EQ(d.suspect_nodes(), std::vector<std::string>{"c"});
  EXPECT_TRUE(d.suspect_links().empty());
  EXPECT_TRUE(std::any_of(d.notes.begin(), d.notes.end(), [](const std::string& n) {
    return n.find("pair b--c slow") != std::string::npos && n.find("c is already a suspect node") != std::string::npos;
  }));
  // The same slow pair between two healthy nodes is a link fault.
  for (auto& [name, metrics] : nodes) metrics["gemm_fp32_tflops"] = 1.0 + static_cast<double>(name[0] - 'a') * 0.01;
  const Diagnosis healthy_ends = diagnose(fleet_of(nodes, pairs), no_expectations());
  EXPECT_EQ(healthy_ends.suspect_links(), std::vector<std::string>{"b--c"});
}

// Link steps that failed or timed out are findings: a node failing with two peers (a lossy port)
// is named as the node, not as its peers' links; a pair failing alone is a link; a node already
// named explains its own failing pairs; a step interrupted by the operator is no finding.
TEST(Diagnosis, FailingLinkStepsNameTheCommonNodeOrTheLink) {
  const std::vector<std::string> names{"n1", "n2", "n3", "n4", "n5", "n6"};
  const auto pairs = all_pairs(names, [](const std::string&, const std::string&) { return 45.0; });
  std::map<std::string, std::map<std::string, double>> nodes;
  for (const auto& n : names) nodes[n] = {};
  FleetDir f = fleet_of(nodes, pairs);
  auto step = [](const std::string& a, const std::string& b, const std::string& detail, const std::string& status) {
    return nlohmann::json{{"phase", "link"}, {"nodes", {a, b}}, {"detail", detail}, {"status", status}};
  };
  f.manifest = {{"steps",
                 {step("n2", "n3", "collectives", "timed out"), step("n2", "n3", "collectives (second try)", "timed out"),
                  step("n1", "n2", "p2p", "failed"), step("n2", "n4", "p2p", "ok"), step("n5", "n6", "rails", "failed"),
                  step("n1", "n4", "p2p", "interrupted"), step("n6", "n5", "p2p", "ok")}}};
  // A damaged manifest is read as far as it goes: a step that is no object, a phase that is no text.
  f.manifest["steps"].push_back(3);
  f.manifest["steps"].push_back({{"phase", 3}, {"nodes", {"n1", "n3"}}, {"status", "failed"}});
  const Diagnosis d = diagnose(f, no_expectations());
  EXPECT_EQ(d.suspect_nodes(), std::vector<std::string>{"n2"});
  EXPECT_EQ(d.suspect_links(), std::vector<std::string>{"n5--n6"});
  const auto n2 = std::find_if(d.suspects.begin(), d.suspects.end(), [](const Suspect& s) { return s.subject == "n2"; });
  ASSERT_NE(n2, d.suspects.end());
  EXPECT_EQ(n2->kind, "node links");
  EXPECT_EQ(n2->reason,
            "slow or failing with 2 of its peers, the node they share (n1: steps p2p failed; n3: steps collectives "
            "timed out, collectives (second try) timed out)");
  EXPECT_EQ(drain_actions(d, "f", "scontrol").at(0).reason, "gpucal fleet f: link steps failed or timed out");
  // n2 already named (its node step failed): its pairs are its own; n5--n6 stays a link.
  f.nodes[1].status = "failed";
  const Diagnosis named = diagnose(f, no_expectations());
  EXPECT_EQ(named.suspect_nodes(), std::vector<std::string>{"n2"});
  EXPECT_EQ(named.suspects.front().kind, "failed");
  EXPECT_EQ(named.suspect_links(), std::vector<std::string>{"n5--n6"});
  // The probe of a node that does not answer fails: its node is the finding, not a "probe phase"
  // that measured nothing.
  f.manifest["steps"].push_back({{"phase", "probe"}, {"nodes", {"n2"}}, {"status", "failed"}});
  const Diagnosis probed = diagnose(f, no_expectations());
  EXPECT_TRUE(std::none_of(probed.suspects.begin(), probed.suspects.end(), [](const Suspect& s) { return s.kind == "phase"; }));
}

// A lossy port (a recorded local run, 3% of one node's packets dropped each way): the median
// half round trip of two of its three pairs is 5-6 ms against 8-12 us, and its third is normal,
// so its capacity (best pair) is; the bandwidth of a third pair is slow. Every slow pair shares
// the node: it is named once, as the node, and none of its peers' links.
TEST(Diagnosis, SlowPairsSharingOneNodeNameTheNodeAcrossMetrics) {
  const std::map<std::pair<std::string, std::string>, std::map<std::string, double>> pairs{
      {{"g1", "g2"}, {{"internode_latency_us", 4940}, {"internode_bw_gbps", 0.0132}}},
      {{"g1", "g3"}, {{"internode_latency_us", 11.7}, {"internode_bw_gbps", 1.13}}},
      {{"g1", "g4"}, {{"internode_latency_us", 8.03}, {"internode_bw_gbps", 3.17}}},
      {{"g2", "g3"}, {{"internode_latency_us", 10.5}, {"internode_bw_gbps", 1.41}}},
      {{"g2", "g4"}, {{"internode_latency_us", 6120}, {"internode_bw_gbps", 2.79}}},
      {{"g3", "g4"}, {{"internode_latency_us", 8.0}, {"internode_bw_gbps", 3.28}}}};
  DiagnosisOptions o = no_expectations();
  o.min_deviation = 0.5;
  const Diagnosis d = diagnose(fleet_of({{"g1", {}}, {"g2", {}}, {"g3", {}}, {"g4", {}}}, pairs), o);
  EXPECT_EQ(d.suspect_nodes(), std::vector<std::string>{"g2"});
  EXPECT_TRUE(d.suspect_links().empty());
  ASSERT_EQ(d.suspects.size(), 1u);
  EXPECT_EQ(d.suspects[0].kind, "node links");
  EXPECT_NE(d.suspects[0].reason.find("with 2 of its peers"), std::string::npos) << d.suspects[0].reason;
  // One slow pair alone stays a link.
  auto one = pairs;
  one[{"g2", "g4"}]["internode_latency_us"] = 9;
  const Diagnosis single = diagnose(fleet_of({{"g1", {}}, {"g2", {}}, {"g3", {}}, {"g4", {}}}, one), o);
  EXPECT_TRUE(single.suspect_nodes().empty());
  EXPECT_EQ(single.suspect_links().size(), 2u);  // g1--g2 by latency and by bandwidth
}

// Recorded on the local Slurm (4 nodes of 2 ranks, link phase, fastest samples): grnode2's link
// capped at 4 Gbit/s (tc tbf), and a night with no fault. grnode2 is in 3 of the 6 pairs, so its
// pairs pull the pairs' median down, and its best pair (0.55) is within the capacities' spread
// (z -3.1): the capacities alone name nobody. Its typical pair (0.51 against the others' 1.4)
// names it. The healthy night's slowest node typically reaches 52% of the others' (the
// host's two cores shared by 8 ranks): nothing named at a --min-deviation of 0.5.
TEST(Diagnosis, ANodeInHalfThePairsIsNamedByItsTypicalPair) {
  DiagnosisOptions o = no_expectations();
  o.min_deviation = 0.5;
  const std::map<std::string, std::map<std::string, double>> nodes{
      {"grnode1", {}}, {"grnode2", {}}, {"grnode3", {}}, {"grnode4", {}}};
  const Diagnosis capped = diagnose(fleet_of(nodes, {{{"grnode1", "grnode2"}, {{"internode_bw_gbps", 0.502}}},
                                                     {{"grnode2", "grnode4"}, {{"internode_bw_gbps", 0.511}}},
                                                     {{"grnode2", "grnode3"}, {{"internode_bw_gbps", 0.551}}},
                                                     {{"grnode1", "grnode4"}, {{"internode_bw_gbps", 1.426}}},
                                                     {{"grnode3", "grnode4"}, {{"internode_bw_gbps", 1.500}}},
                                                     {{"grnode1", "grnode3"}, {{"internode_bw_gbps", 2.022}}}}),
                                    o);
  EXPECT_EQ(capped.suspect_nodes(), std::vector<std::string>{"grnode2"});
  EXPECT_TRUE(capped.suspect_links().empty());
  ASSERT_EQ(capped.suspects.size(), 1u);
  EXPECT_EQ(capped.suspects[0].kind, "node links");
  EXPECT_NE(capped.suspects[0].reason.find("its pairs typically 0.51"), std::string::npos) << capped.suspects[0].reason;
  const Diagnosis healthy = diagnose(fleet_of(nodes, {{{"grnode1", "grnode3"}, {{"internode_bw_gbps", 1.477}}},
                                                      {{"grnode3", "grnode4"}, {{"internode_bw_gbps", 1.508}}},
                                                      {{"grnode1", "grnode4"}, {{"internode_bw_gbps", 2.885}}},
                                                      {{"grnode2", "grnode3"}, {{"internode_bw_gbps", 2.886}}},
                                                      {{"grnode2", "grnode4"}, {{"internode_bw_gbps", 2.894}}},
                                                      {{"grnode1", "grnode2"}, {{"internode_bw_gbps", 2.951}}}}),
                                     o);
  EXPECT_TRUE(healthy.suspects.empty()) << healthy.suspects[0].subject << ": " << healthy.suspects[0].reason;
}

TEST(Diagnosis, TwoSlowNodesOfSixDoNotMoveThePairReference) {
  const std::vector<std::string> names{"n1", "n2", "n3", "n4", "n5", "n6"};
  const auto pairs = all_pairs(names, [](const std::string& x, const std::string& y) {
    const bool slow = x == "n2" || y == "n2" || x == "n5" || y == "n5";  // 9 of 15 pairs slow
    return slow ? 3.0 : 40.0;
  });
  std::map<std::string, std::map<std::string, double>> nodes;
  for (const auto& n : names) nodes[n] = {};
  const Diagnosis d = diagnose(fleet_of(nodes, pairs), no_expectations());
  auto named = d.suspect_nodes();
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, (std::vector<std::string>{"n2", "n5"}));
  EXPECT_TRUE(d.suspect_links().empty());
}

TEST(Diagnosis, HungNodesAreNamedAndFloorsApplyToFewNodes) {
  FleetDir f = fleet_of({{"a", {{"hbm_copy_gbps", 1000}}}, {"b", {{"hbm_copy_gbps", 2950}}}});
  f.nodes.push_back(NodeResults{"c", "hung", "no answer to a probe", {}, {}, ""});
  const std::string file = (std::filesystem::temp_directory_path() / "gpucal_test_floor.json").string();
  std::ofstream(file) << R"({"expectations_schema_version": 1, "sku": "x", "metrics": {"hbm_copy_gbps": {"unit": "GB/s",
    "better": "higher", "typical": {"value": 2900, "source": "s"}, "floor": {"value": 2610, "source": "f"}}}})";
  DiagnosisOptions o;
  o.expect = file;
  const Diagnosis d = diagnose(f, o);
  EXPECT_EQ(d.suspect_nodes(), (std::vector<std::string>{"c", "a"}));
  EXPECT_NE(d.suspects[1].reason.find("misses the SKU floor 2610"), std::string::npos) << d.suspects[1].reason;
  EXPECT_FALSE(d.notes.empty());  // 2 measured nodes: not ranked
  std::filesystem::remove(file);
}

// A baseline's p2p_bw_gbps floor is a node's own figure: pairs that report that id (both ranks on
// one host, a local rehearsal) are ranked against each other, never held to it; a floor of a
// quantity between nodes (internode_bw_gbps) does apply to pairs.
TEST(Diagnosis, NodeFloorsAreNotAppliedToLinkPairs) {
  std::map<std::string, std::map<std::string, double>> nodes;
  std::map<std::pair<std::string, std::string>, std::map<std::string, double>> pairs;
  const std::vector<std::string> names{"a", "b", "c", "d"};
  for (const auto& n : names) nodes[n] = {{"p2p_bw_gbps", 13.6}};
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = i + 1; j < names.size(); ++j)
      pairs[{names[i], names[j]}] = {{"p2p_bw_gbps", 8.1}, {"internode_bw_gbps", 8.1}};
  const std::string file = (std::filesystem::temp_directory_path() / "gpucal_test_link_floor.json").string();
  std::ofstream(file) << R"({"expectations_schema_version": 1, "sku": "x", "metrics": {
    "p2p_bw_gbps": {"unit": "GB/s", "better": "higher", "typical": {"value": 13.6, "source": "s"}, "floor": {"value": 12.9, "source": "f"}},
    "internode_bw_gbps": {"unit": "GB/s", "better": "higher", "typical": {"value": 12, "source": "s"}, "floor": {"value": 10, "source": "f"}}},
    "generated_by": {"statistic": "best"}})";
  DiagnosisOptions o;
  o.expect = file;
  const Diagnosis d = diagnose(fleet_of(nodes, pairs), o);
  for (const Suspect& s : d.suspects) EXPECT_NE(s.metric, "p2p_bw_gbps") << s.subject << ": " << s.reason;
  EXPECT_EQ(d.suspect_nodes().size(), 4u);  // every node's best internode pair misses the internode floor
  for (const MetricTable& t : d.pair_tables)
    if (t.metric == "p2p_bw_gbps") EXPECT_FALSE(t.floor) << "the node floor reached the pair table";
    else EXPECT_EQ(t.floor, std::optional<double>(10));
  const auto says = [&](const std::string& what) {
    return std::any_of(d.notes.begin(), d.notes.end(), [&](const std::string& n) { return n.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(says("node floor is not applied to pairs"));
  EXPECT_TRUE(says("made from best figures"));  // the report reads median figures
  std::filesystem::remove(file);
}

// --drain: one scontrol call per suspect node, the first finding as a Slurm-safe reason; links,
// groups and phases drain nothing; and the program's exit decides "drained".
TEST(Drain, EverySuspectNodeOnceWithItsFindingAndNoLink) {
  Diagnosis d;
  d.suspects = {{.subject = "gpu03", .kind = "node", .metric = "gemm_bf16_tflops"},
                {.subject = "gpu03", .kind = "node links", .metric = "p2p_bw_gbps"},
                {.subject = "gpu01--gpu02", .kind = "link", .metric = "p2p_bw_gbps"},
                {.subject = "gpu07", .kind = "hung"},
                {.subject = "link", .kind = "phase", .reason = "every link step failed"},
                {.subject = "gpu09", .kind = "failed", .reason = "exit 139\n\"quoted\""}};
  const auto a = drain_actions(d, "fleet-2026-11-28", "scontrol");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].node, "gpu03");
  EXPECT_EQ(a[0].reason, "gpucal fleet fleet-2026-11-28: node gemm_bf16_tflops");
  EXPECT_EQ(a[0].command,
            "scontrol update NodeName='gpu03' State=DRAIN Reason='gpucal fleet fleet-2026-11-28: node gemm_bf16_tflops'");
  EXPECT_EQ(a[1].reason, "gpucal fleet fleet-2026-11-28: hung");
  EXPECT_EQ(a[2].node, "gpu09");
  const auto long_name = drain_actions(d, std::string(300, 'x') + "\"\n", "scontrol");
  EXPECT_LE(long_name[0].reason.size(), kMaxDrainReason);
  EXPECT_EQ(long_name[0].reason.find_first_of("\"'\n"), std::string::npos);
  Diagnosis healthy;
  EXPECT_TRUE(drain_actions(healthy, "f", "scontrol").empty());
  std::ostringstream out;
  EXPECT_EQ(drain_nodes({{"a", "r", "true"}, {"b", "r", "false"}}, out), 1);
  EXPECT_NE(out.str().find("drained a (r)"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("drained b"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace gpucal::fleet
