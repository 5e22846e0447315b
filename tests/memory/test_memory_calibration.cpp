// calibration.json's memory section (app/fit/memory_tables.*): plateau detection on
// curves with known levels, and the section built from a synthetic results folder whose
// bench_memory rows follow known plateaus, vector rates and op bandwidths.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "app/fit/calibration_build.h"
#include "app/fit/memory_tables.h"
#include "app/common/results_dir.h"
#include "tests/calibration/synthetic_results.h"

namespace gpucal::calibration {
namespace {

using nlohmann::json;

std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpucal_memory_cal_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(MemoryCalibration, PlateausFromTheCurveWithTheirLevels) {
  const std::vector<CacheLevelFact> levels{{"L1d", 64e3}, {"L2", 4e6}};
  std::vector<std::pair<double, double>> pts;
  // Launch-bound rise, an L1 plateau, a transition, an L2 plateau, and memory (3% noise).
  const double noise[] = {1.0, 1.03, 0.97, 1.02, 0.99, 1.01};
  int i = 0;
  for (double ws : {1e3, 2e3}) pts.emplace_back(ws, ws / 1e3 * 500);  // 500, 1000 GB/s: rising
  for (double ws : {8e3, 16e3, 32e3}) pts.emplace_back(ws, 4000 * noise[i++ % 6]);
  pts.emplace_back(100e3, 2500);
  for (double ws : {200e3, 400e3, 800e3, 1.6e6}) pts.emplace_back(ws, 1500 * noise[i++ % 6]);
  for (double ws : {16e6, 32e6, 64e6, 128e6}) pts.emplace_back(ws, 300 * noise[i++ % 6]);
  std::reverse(pts.begin(), pts.end());  // any order
  const auto p = detect_plateaus(pts, levels);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].level, "L1d");
  EXPECT_EQ(p[0].points, 3);
  EXPECT_NEAR(p[0].bandwidth_gbps, 4000, 150);
  EXPECT_DOUBLE_EQ(p[0].level_bytes, 64e3);
  EXPECT_EQ(p[1].level, "L2");
  EXPECT_EQ(p[1].points, 4);
  EXPECT_DOUBLE_EQ(p[1].working_set_min, 200e3);
  EXPECT_EQ(p[2].level, "memory");
  EXPECT_NEAR(p[2].bandwidth_gbps, 300, 10);
  EXPECT_DOUBLE_EQ(p[2].level_bytes, 0);
  // A curve that never flattens has no plateau; without cache facts everything is memory.
  EXPECT_TRUE(detect_plateaus({{1, 1}, {2, 2}, {4, 4}, {8, 8}}, levels).empty());
  const auto flat = detect_plateaus({{1, 10}, {2, 10.5}, {4, 9.8}}, {});
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(flat[0].level, "memory");
}

TEST(MemoryCalibration, SectionFromSyntheticResults) {
  const std::string dir = temp_dir("section");
  testing::write_synthetic_results(dir);
  const json doc = build_calibration(load_results_dir(dir));
  const json& m = doc["memory"];
  ASSERT_TRUE(m.is_object()) << doc["missing"].dump();
  EXPECT_TRUE(m.contains("d2d_copy"));  // bench_p2p's copies stay
  EXPECT_NEAR(m["device_bandwidth_gbps"].get<double>(), testing::kMemoryGbps, 0.05 * testing::kMemoryGbps);
  EXPECT_NE(m["device_bandwidth_source"].get<std::string>().find("copy fp32"), std::string::npos);
  // One plateau per level for copy and triad.
  std::map<std::pair<std::string, std::string>, double> plateau;
  for (const auto& p : m["stream"]["plateaus"]) plateau[{p["kernel"], p["level"]}] = p["bandwidth_gbps"];
  for (const std::string kernel : {"copy", "triad"}) {
    const double l1 = plateau[{kernel, "L1d"}], l2 = plateau[{kernel, "L2"}], mem = plateau[{kernel, "memory"}];
    EXPECT_NEAR(l1, testing::kL1Gbps, 0.05 * testing::kL1Gbps) << kernel;
    EXPECT_NEAR(l2, testing::kL2Gbps, 0.05 * testing::kL2Gbps) << kernel;
    EXPECT_NEAR(mem, testing::kMemoryGbps, 0.05 * testing::kMemoryGbps) << kernel;
  }
  EXPECT_EQ(m["stream"]["cache_levels"].size(), 2u);
  // Vector rates against their peak.
  EXPECT_NEAR(m["vector"]["fp32"]["best_tflops"].get<double>(), testing::kVectorTflops, 2.0);
  EXPECT_NEAR(m["vector"]["fp32"]["efficiency"].get<double>(), testing::kVectorTflops / testing::kVectorPeakTflops, 0.05);
  // Ops: bandwidth by bytes, efficiency against the device bandwidth (0.8 by construction).
  const json& ln = m["ops"]["layernorm_fwd"]["bf16"];
  ASSERT_EQ(ln["by_bytes"].size(), 3u);
  for (const auto& e : ln["by_bytes"]) EXPECT_NEAR(e["efficiency"].get<double>(), 0.8, 0.06);
  const json& steps = ln["MB_efficiency"];
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_GT(steps[0][0].get<double>(), steps[2][0].get<double>());  // descending MB thresholds
  EXPECT_NEAR(steps[2][0].get<double>(), (2.0 * 1024 * 4096 * 2 + 4 * 4096 + 8.0 * 1024) / 1e6, 1e-9);
}

TEST(MemoryCalibration, WhatCannotBeComputedIsNamed) {
  const std::string dir = temp_dir("partial");
  // Only op rows: no STREAM curve, hence no device bandwidth and no efficiencies.
  std::ofstream(dir + "/memory.csv")
      << "bench,point,status,regime,samples,time_us_median,time_us_p10,time_us_p90,impl,kernel,family,dtype,rows,cols,"
         "working_set_bytes,bytes,bandwidth_gbps\n"
         "memory,a,ok,hot,10,1,1,1,gpucal,gelu_fwd,op,bf16,4,4,64,64,0.064\n";
  const json doc = build_calibration(load_results_dir(dir));
  EXPECT_FALSE(doc["memory"].contains("device_bandwidth_gbps"));
  EXPECT_TRUE(doc["memory"]["ops"]["gelu_fwd"]["bf16"]["MB_efficiency"].is_null());
  const std::string missing = doc["missing"].dump();
  EXPECT_NE(missing.find("memory.device_bandwidth_gbps"), std::string::npos) << missing;
  EXPECT_NE(missing.find("memory.vector"), std::string::npos);
  EXPECT_NE(missing.find("memory.stream"), std::string::npos);
}

}  // namespace
}  // namespace gpucal::calibration
