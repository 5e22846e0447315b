// Conformance of the Calculon export with what Calculon's code (calculon-ai/calculon caa4b11)
// requires, as read in calculon/system.py, processor.py, memory.py, network.py and llm/llm.py;
// the tool itself cannot run in CI (tests/perf/check_exports_with_tools.sh runs it locally).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "app/export/export_registry.h"
#include "app/export/export_common.h"
#include "tests/calibration/conformance_calibration.h"
#include "tests/calibration/conformance_readers.h"
#include "tests/calibration/test_util.h"
#include "tests/calibration/tool_formulas_reference.h"

namespace gpucal::calibration {
namespace {

using nlohmann::json;
using testing::comm_truth;
using testing::CommTruth;
using testing::conformance_calibration;
using testing::conformance_settings;
using testing::calculon_time_s;

struct Export {
  ExportReport report;
  json system;
};

Export export_calculon_of(const json& calibration, const std::vector<std::string>& settings,
                          const std::string& dir) {
  Export e;
  e.report = export_with("calculon", calibration, ExportSettings::parse(settings), dir);
  if (e.report.ok()) e.system = json::parse(testing::read_text(dir + "/calculon/system.json"));
  return e;
}

TEST(ConformanceCalculon, EverySectionCalculonRequiresIsThereWithItsTypes) {
  const std::string dir = testing::fresh_temp_dir();
  const Export e = export_calculon_of(conformance_calibration(), conformance_settings(), dir);
  ASSERT_TRUE(e.report.ok()) << format_export_report(e.report);
  const json& s = e.system;
  testing::expect_calculon_system(s);
  ASSERT_EQ(s["networks"].size(), 2u);
  EXPECT_EQ(s["mem1"]["GBps"].get<double>(), testing::kCopyGbps);
  EXPECT_EQ(s["mem1"]["GiB"].get<double>(), testing::kDeviceMemoryGiB);
  EXPECT_EQ(s["mem2"]["GBps"].get<double>(), 50.0);
  // llm.py: a tier smaller than the groups an execution puts on it "isn't big enough"; the
  // inter-node tier holds the modelled machine (--set nodes=16), not the measured 2 nodes.
  EXPECT_EQ(s["networks"][0]["size"], testing::kGpusPerNode);
  EXPECT_EQ(s["networks"][1]["size"], 16 * testing::kGpusPerNode);
  EXPECT_TRUE(std::filesystem::exists(dir + "/calculon/NOTES.md"));
}

// Each op of a tier reproduces ITS collective's measurement at the group size asked for, within
// 1% from 1 MiB to 1 GiB (the fits' bandwidth regime; exact α–β truth here).
TEST(ConformanceCalculon, EachOpReproducesItsOwnCollectiveAtTheTiersGroupSize) {
  const std::string dir = testing::fresh_temp_dir();
  const Export e = export_calculon_of(conformance_calibration(), conformance_settings(), dir);
  ASSERT_TRUE(e.report.ok()) << format_export_report(e.report);
  const json& intra = e.system["networks"][0];
  const int n = testing::kGpusPerNode;
  const std::pair<const char*, const char*> ops[] = {
      {"all_reduce", "allreduce"}, {"all_gather", "allgather"}, {"reduce_scatter", "reduce_scatter"}};
  for (double size : {1048576.0, 64.0 * 1048576, 1073741824.0})
    for (const auto& [op, collective] : ops) {
      const double ours = testing::truth_time_us(collective, n, false, size);
      const double theirs = calculon_time_s(intra, op, size, n) * 1e6;
      if (std::string(op) == "all_reduce") EXPECT_NEAR(theirs / ours, 1.0, 0.01) << op << " " << size;
      // one latency per tier (allreduce α): the other ops match in their bandwidth term
      const CommTruth t = comm_truth(collective, n, false);
      const double ours_bw_term = size * testing::bus_factor(collective, n) / (t.busbw_gbps * 1e3);
      EXPECT_NEAR((theirs - intra["latency"].get<double>() * 1e6) / ours_bw_term, 1.0, 0.01)
          << op << " " << size;
    }
  const CommTruth p2p = testing::p2p_truth(false);
  const double size = 64.0 * 1048576;
  EXPECT_NEAR((calculon_time_s(intra, "p2p", size, 2) - intra["latency"].get<double>()) * 1e6 /
                  (size / (p2p.busbw_gbps * 1e3)),
              1.0, 0.01);
  // Across nodes: the whole modelled machine (nodes=16 x 8 = 128 GPUs), extrapolated by the
  // communication models from the measured 16-rank group: α scaled by (n-1) (ring), bus bandwidth
  // kept.
  const json& inter = e.system["networks"][1];
  EXPECT_EQ(inter["size"], 128);
  const CommTruth t16 = comm_truth("allreduce", 16, true);
  const double extrapolated_us =
      t16.alpha_us * 127.0 / 15.0 + size * testing::bus_factor("allreduce", 128) / (t16.busbw_gbps * 1e3);
  EXPECT_NEAR(calculon_time_s(inter, "all_reduce", size, 128) * 1e6 / extrapolated_us, 1.0, 0.01);
  bool marked = false;
  for (const auto& note : e.report.notes) marked |= note.find("allreduce at 128 GPUs: extrapolated") != std::string::npos;
  EXPECT_TRUE(marked) << format_export_report(e.report);
  // --set inter_group=16: the measured group's own allreduce.
  auto settings = conformance_settings();
  settings.push_back("inter_group=16");
  const Export measured = export_calculon_of(conformance_calibration(), settings, testing::fresh_temp_dir("g16"));
  EXPECT_NEAR(calculon_time_s(measured.system["networks"][1], "all_reduce", size, 16) * 1e6 /
                  testing::truth_time_us("allreduce", 16, true, size),
              1.0, 0.01);
}

// --set intra_group=2: the tier's figures are the 2-GPU group's, not the largest group's.
TEST(ConformanceCalculon, IntraGroupPicksThatGroupsFits) {
  const std::string dir = testing::fresh_temp_dir();
  auto settings = conformance_settings();
  settings.push_back("intra_group=2");
  const Export e = export_calculon_of(conformance_calibration(), settings, dir);
  ASSERT_TRUE(e.report.ok());
  const json& intra = e.system["networks"][0];
  EXPECT_NEAR(intra["bandwidth"].get<double>(), comm_truth("allreduce", 2, false).busbw_gbps, 0.5);
  EXPECT_NEAR(intra["latency"].get<double>(), comm_truth("allreduce", 2, false).alpha_us * 1e-6, 0.2e-6);
  const double size = 16.0 * 1048576;
  EXPECT_NEAR(calculon_time_s(intra, "all_reduce", size, 2) * 1e6 /
                  testing::truth_time_us("allreduce", 2, false, size),
              1.0, 0.01);
}

// Matrix: Calculon's throughput(flops) = tflops·1e12·eff(first threshold <= flops) for the
// largest GEMM equals the achieved rate within the step table's bucket spread (5%).
TEST(ConformanceCalculon, MatrixRateOfALargeGemmIsTheMeasuredOne) {
  const std::string dir = testing::fresh_temp_dir();
  const Export e = export_calculon_of(conformance_calibration(), conformance_settings(), dir);
  ASSERT_TRUE(e.report.ok());
  const json& bf16 = e.system["matrix"]["bfloat16"];
  const double flops = 2.0 * 8192 * 8192 * 8192;
  double eff = 0;
  for (const json& row : bf16["gflops_efficiency"])
    if (flops >= row[0].get<double>() * 1e9) {
      eff = row[1].get<double>();
      break;
    }
  EXPECT_NEAR(bf16["tflops"].get<double>() * eff / testing::gemm_truth_tflops(8192, 8192, 8192), 1.0, 0.05);
}

// Not measured and not set: refused, one line each naming the --set key; nothing written.
TEST(ConformanceCalculon, RefusesWithTheFlagThatSuppliesEachMissingFigure) {
  const std::string dir = testing::fresh_temp_dir();
  const Export e = export_calculon_of(conformance_calibration(), {"nodes=16"}, dir);
  ASSERT_FALSE(e.report.ok());
  std::string all;
  for (const auto& line : e.report.refused) {
    EXPECT_EQ(line.find('\n'), std::string::npos);
    all += line + "\n";
  }
  for (const char* key :
       {"--set vector_tflops=", "--set processor_usage=", "--set offload_gbps=", "--set offload_gib="})
    EXPECT_NE(all.find(key), std::string::npos) << key << " in\n" << all;
  EXPECT_FALSE(std::filesystem::exists(dir + "/calculon/system.json"));
  // The modelled machine is not a measurement: with an inter-node tier, nodes is required.
  auto settings = conformance_settings();
  settings.pop_back();  // nodes
  const Export no_nodes = export_calculon_of(conformance_calibration(), settings, dir);
  ASSERT_EQ(no_nodes.report.refused.size(), 1u);
  EXPECT_NE(no_nodes.report.refused[0].find("--set nodes="), std::string::npos);
}

// One node measured: one tier, sized to the node; every execution must use tier 0.
TEST(ConformanceCalculon, OneNodeRunWritesOneTierOfTheNodesSize) {
  const std::string dir = testing::fresh_temp_dir();
  const Export e = export_calculon_of(conformance_calibration(false), conformance_settings(), dir);
  ASSERT_TRUE(e.report.ok()) << format_export_report(e.report);
  ASSERT_EQ(e.system["networks"].size(), 1u);
  testing::expect_calculon_network(e.system["networks"][0]);
  EXPECT_EQ(e.system["networks"][0]["size"], testing::kGpusPerNode);
}

}  // namespace
}  // namespace gpucal::calibration
