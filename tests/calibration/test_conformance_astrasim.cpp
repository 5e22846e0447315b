// Conformance of the ASTRA-sim export with what ASTRA-sim (c0cf6d6) and its analytical network
// backend require, as read in extern/network_backend/analytical/common/network-parser/
// NetworkParser.cpp (YAML lists topology, npus_count as int > 1, bandwidth as double > 0,
// latency as double >= 0, one entry per dimension), common/NetworkFunction.cpp (bandwidth x 2^30
// B/s), and astra-sim/system/Sys.cc initialize_sys (nlohmann::json typed reads: a null aborts).
// The network file is parsed with yaml-cpp, the library the backend uses.
#include <gtest/gtest.h>

#include <set>

#include "app/export/export_registry.h"
#include "app/export/export_common.h"
#include "tests/calibration/conformance_calibration.h"
#include "tests/calibration/conformance_readers.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

using nlohmann::json;

using testing::AstraSimNetwork;
using testing::parse_as_astrasim;

std::vector<std::string> astrasim_settings() {
  return {"nodes=16"};
}

TEST(ConformanceAstraSim, NetworkYamlParsesAsTheBackendReadsIt) {
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r =
      export_with("astrasim", testing::conformance_calibration(), ExportSettings::parse(astrasim_settings()), dir);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  const AstraSimNetwork n = parse_as_astrasim(dir + "/astrasim/network.yml");
  testing::expect_astrasim_network(n);
  ASSERT_EQ(n.topology.size(), 2u);
  EXPECT_EQ(n.npus[0], testing::kGpusPerNode);
  EXPECT_EQ(n.npus[1], 16);  // the modelled machine's nodes (--set nodes), not the measured 2
}

TEST(ConformanceAstraSim, SystemJsonReadsWithTheTypesSysCcAssigns) {
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r =
      export_with("astrasim", testing::conformance_calibration(), ExportSettings::parse(astrasim_settings()), dir);
  ASSERT_TRUE(r.ok());
  const json j = json::parse(testing::read_text(dir + "/astrasim/system.json"));
  const std::size_t dims = parse_as_astrasim(dir + "/astrasim/network.yml").topology.size();
  testing::expect_astrasim_system(j, dims);
  EXPECT_DOUBLE_EQ(j["local-mem-bw"].get<double>(), testing::kCopyGbps);  // GB/s (x 1e9 in Sys.cc)
  // peak-perf (TFLOP/s, x 1e12): the reference GEMM's achieved rate, so the roofline's compute
  // time of that GEMM is ours.
  EXPECT_NEAR(j["peak-perf"].get<double>(), testing::gemm_truth_tflops(8192, 8192, 8192), 1e-9);
}

// The analytical backend's ring allreduce (one chunk, Switch dimensions), as its code runs it and
// as checked against its output: per dimension d, 2(n_d-1) messages of the remaining data / n_d,
// each 2 hops x latency_d + bytes / (bandwidth_d x 2^30); dimension 1 handles S / n0; each NPU
// reduces (n-1)/n·S bytes at 3 passes of local-mem-bw (x 1e9).
double astrasim_allreduce_ns(const AstraSimNetwork& net, double local_mem_gbps, double size,
                             std::size_t dims) {
  double t = 0, data = size, n = 1;
  for (std::size_t d = 0; d < dims; ++d) {
    const double nd = net.npus[d];
    t += 2 * (nd - 1) * (2 * net.latency_ns[d] + data / nd / (net.bandwidth_gibps[d] * 1073741824.0) * 1e9);
    data /= nd;
    n *= nd;
  }
  return t + 3 * (n - 1) / n * size / (local_mem_gbps * 1e9) * 1e9;
}

// One node (the intra-node dimension) and two nodes of 8 (both dimensions) reproduce our
// allreduce: the GiB/s unit, the per-link bandwidth, the stages it adds and its reductions.
TEST(ConformanceAstraSim, SimulatedAllreduceIsOursWithinAndAcrossNodes) {
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r = export_with("astrasim", testing::conformance_calibration(), {}, dir);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  AstraSimNetwork net = parse_as_astrasim(dir + "/astrasim/network.yml");
  const json j = json::parse(testing::read_text(dir + "/astrasim/system.json"));
  const double mem = j["local-mem-bw"];
  ASSERT_EQ(net.npus[1], 2);  // the measured nodes without --set nodes
  for (double size : {1048576.0, 64.0 * 1048576, 1073741824.0}) {
    EXPECT_NEAR(astrasim_allreduce_ns(net, mem, size, 1) /
                    (testing::truth_time_us("allreduce", 8, false, size) * 1e3),
                1.0, 0.01)
        << size;
    EXPECT_NEAR(astrasim_allreduce_ns(net, mem, size, 2) /
                    (testing::truth_time_us("allreduce", 16, true, size) * 1e3),
                1.0, 0.01)
        << size;
  }
  // The bandwidth is not our GB/s copied: GiB/s and room for the reductions.
  EXPECT_GT(net.bandwidth_gibps[0] * 1.073741824, testing::comm_truth("allreduce", 8, false).busbw_gbps);
}

// --set nodes=1 models one node: the network is dimension 0 alone, and no inter-node figure is
// asked for or used (a calibration whose inter-node allreduce cannot be derived still exports).
TEST(ConformanceAstraSim, OneNodeModelledIsTheIntraNodeDimensionAlone) {
  json calibration = testing::conformance_calibration();
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r = export_with("astrasim", calibration, ExportSettings::parse({"nodes=1"}), dir);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  const AstraSimNetwork n = parse_as_astrasim(dir + "/astrasim/network.yml");
  ASSERT_EQ(n.topology.size(), 1u);
  EXPECT_EQ(n.npus[0], testing::kGpusPerNode);
  bool said = false;
  for (const auto& note : r.notes) said = said || note.find("--set nodes=1 models one node") != std::string::npos;
  EXPECT_TRUE(said) << format_export_report(r);
  // With two nodes the same calibration has its inter-node dimension.
  const std::string two = testing::fresh_temp_dir();
  ASSERT_TRUE(export_with("astrasim", calibration, ExportSettings::parse({"nodes=2"}), two).ok());
  EXPECT_EQ(parse_as_astrasim(two + "/astrasim/network.yml").topology.size(), 2u);
}

TEST(ConformanceAstraSim, RefusesWithoutMemoryBandwidth) {
  json calibration = testing::conformance_calibration();
  calibration["memory"] = nullptr;
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r = export_with("astrasim", calibration, ExportSettings::parse(astrasim_settings()), dir);
  ASSERT_EQ(r.refused.size(), 1u);
  EXPECT_NE(r.refused[0].find("--set memory_gbps="), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir + "/astrasim/system.json"));
}

}  // namespace
}  // namespace gpucal::calibration
