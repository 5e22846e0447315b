// Conformance of the vTrain export with what vTrain (f8dda84) requires, as read in
// src/predictor.py (get_allreduce_LUT, compute_comm_time) and src/config.py (vTrainConfig's
// keyword arguments). The tool itself cannot run in CI.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "app/export/export_registry.h"
#include "app/export/export_common.h"
#include "tests/calibration/conformance_calibration.h"
#include "tests/calibration/conformance_readers.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

TEST(ConformanceVTrain, LutFilesAreWhereAndHowTheLoaderReadsThem) {
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r = export_with("vtrain", testing::conformance_calibration(), {}, dir);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  const json config = json::parse(testing::read_text(dir + "/vtrain/system_config.json"));
  std::set<int> gpu_counts;
  for (const auto& [n, lut] : testing::read_vtrain_tables(config)) {
    gpu_counts.insert(n);
    for (long long mib : {1LL, 100LL, 1024LL}) {
      const double size = mib * 1048576.0;
      const auto [time_ns, busbw] = lut.rows.at(mib);
      // A count beyond a node is the inter-node group's (vTrain keys tables by GPU count only).
      const bool across = n > testing::kGpusPerNode;
      EXPECT_NEAR(time_ns / (testing::truth_time_us("allreduce", n, across, size) * 1e3), 1.0, 0.01)
          << n << " GPUs, " << mib << " MiB";
      EXPECT_NEAR(busbw, size * testing::bus_factor("allreduce", n) / time_ns, 0.01);  // GB/s, S·2(n-1)/n / t
    }
  }
  // Powers of two up to the machine (measured: 2 nodes of 8), each from its own tier.
  EXPECT_EQ(gpu_counts, (std::set<int>{2, 4, 8, 16}));
}

// Imported logs (gpucal import) name their GPU under sources[].device, not device.name.
TEST(ConformanceVTrain, GpuNameOfImportedLogsIsTheLogsGpu) {
  json c = testing::conformance_calibration();
  c["run_metadata"] = {{"collectives",
                        {{"bench", "collectives"},
                         {"imported", true},
                         {"sources", json::array({{{"device", ""}}, {{"device", "NVIDIA H100 80GB HBM3"}}})}}}};
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r = export_with("vtrain", c, {}, dir);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  const json config = json::parse(testing::read_text(dir + "/vtrain/system_config.json"));
  EXPECT_EQ(config["gpu_name"], "nvidia_h100_80gb_hbm3");
  EXPECT_TRUE(fs::is_directory(dir + "/vtrain/nvidia_h100_80gb_hbm3"));
}

TEST(ConformanceVTrain, SystemConfigKeysAreVTrainConfigArgumentsInItsUnits) {
  const std::string dir = testing::fresh_temp_dir();
  ASSERT_TRUE(export_with("vtrain", testing::conformance_calibration(), {}, dir).ok());
  const json config = json::parse(testing::read_text(dir + "/vtrain/system_config.json"));
  testing::expect_vtrain_config_keys(config);
  EXPECT_EQ(config["node_size"], testing::kGpusPerNode);
  // compute_comm_time's fallback: size / (intra_node_bandwidth·2^30)·2(n-1)/n s.
  const double busbw = testing::comm_truth("allreduce", 8, false).busbw_gbps;
  EXPECT_NEAR(config["intra_node_bandwidth"].get<double>() * 1073741824.0 / 1e9, busbw, 1e-6 * busbw);
  // Data-parallel allreduce across nodes: size / (inter_node_bandwidth·2^30/8)·2(dp-1)/dp.
  const double inter = testing::comm_truth("allreduce", 16, true).busbw_gbps;
  EXPECT_NEAR(config["inter_node_bandwidth"].get<double>() * 1073741824.0 / 8 / 1e9, inter, 1e-6 * inter);
}

// Beyond the measured sizes the rows come from the α–β over the largest measured sizes, counted
// in the notes; a group measured only below 1 MiB gives no table, and no table at all refuses.
TEST(ConformanceVTrain, ExtrapolatesFromTheBandwidthRegimeAndRefusesWithoutOne) {
  auto keep_sizes_up_to = [](double limit) {
    json calibration = testing::conformance_calibration(false);
    for (json& g : calibration["communication"]["collectives"]) {
      json kept = json::array();
      for (const json& p : g["points"])
        if (p["size_bytes"].get<double>() <= limit) kept.push_back(p);
      g["points"] = kept;
    }
    return calibration;
  };
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r = export_with("vtrain", keep_sizes_up_to(128.0 * 1048576), {}, dir);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("896 EXTRAPOLATED") != std::string::npos;
  EXPECT_TRUE(noted) << format_export_report(r);
  const testing::VTrainLut lut =
      testing::read_lut_as_vtrain_does(dir + "/vtrain/nvidia_h100_80gb_hbm3/AR_GPU8_1M_1024M_LUT");
  EXPECT_NEAR(lut.rows.at(1024).first / (testing::truth_time_us("allreduce", 8, false, 1073741824.0) * 1e3),
              1.0, 0.01);

  const std::string dir2 = testing::fresh_temp_dir("small");
  const ExportReport small = export_with("vtrain", keep_sizes_up_to(1048576), {}, dir2);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.refused[0].find("1 MiB"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir2 + "/vtrain"));
}

}  // namespace
}  // namespace gpucal::calibration
