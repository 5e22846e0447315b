// Each exporter's files checked against the consumer's documented shape (REFERENCE.md):
// keys, JSON types and units (GB/s, seconds, ns, TFLOP/s).
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "calibration_json.h"
#include "csv_table.h"
#include "export_common.h"
#include "results_dir.h"
#include "synthetic_results.h"
#include "test_util.h"

namespace gpucal::calibration {
namespace {

using nlohmann::json;

json load_json(const std::string& path) { return json::parse(testing::read_text(path)); }

struct Exported {
  std::string out;
  std::vector<ExportReport> reports;
};

Exported export_synthetic(const std::string& target) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir + "/results");
  const json calibration = build_calibration(load_results_dir(dir + "/results"));
  return {dir + "/export", export_to(calibration, target, dir + "/export")};
}

void expect_descending_step_table(const json& table) {
  ASSERT_TRUE(table.is_array());
  ASSERT_FALSE(table.empty());
  for (std::size_t i = 0; i < table.size(); ++i) {
    ASSERT_TRUE(table[i].is_array() && table[i].size() == 2) << table.dump();
    EXPECT_TRUE(table[i][0].is_number() && table[i][1].is_number());
    EXPECT_GT(table[i][1].get<double>(), 0.0);
    EXPECT_LE(table[i][1].get<double>(), 1.0);
    if (i) EXPECT_LT(table[i][0].get<double>(), table[i - 1][0].get<double>());
  }
  EXPECT_EQ(table.back()[0].get<double>(), 0.0);  // every op size matches some entry
}

TEST(ExportCalculon, SystemJsonHasCalculonShapeAndUnits) {
  const Exported e = export_synthetic("calculon");
  const json s = load_json(e.out + "/calculon/system.json");
  for (const char* dtype : {"bfloat16", "float32"}) {
    ASSERT_TRUE(s["matrix"].contains(dtype)) << s["matrix"].dump();
    EXPECT_TRUE(s["matrix"][dtype]["tflops"].is_number());
    expect_descending_step_table(s["matrix"][dtype]["gflops_efficiency"]);
  }
  EXPECT_DOUBLE_EQ(s["matrix"]["bfloat16"]["tflops"].get<double>(), testing::kBf16PeakTflops);
  EXPECT_NEAR(s["mem1"]["GBps"].get<double>(), testing::kMemoryGbps, 0.05 * testing::kMemoryGbps);
  EXPECT_NEAR(s["mem1"]["GiB"].get<double>(), 80.0, 1e-9);
  expect_descending_step_table(s["mem1"]["MB_efficiency"]);
  ASSERT_TRUE(s["vector"].contains("float32")) << s["vector"].dump();
  EXPECT_DOUBLE_EQ(s["vector"]["float32"]["tflops"].get<double>(), testing::kVectorPeakTflops);
  expect_descending_step_table(s["vector"]["float32"]["gflops_efficiency"]);
  EXPECT_NEAR(s["vector"]["float32"]["gflops_efficiency"][0][1].get<double>(),
              testing::kVectorTflops / testing::kVectorPeakTflops, 0.05);
  ASSERT_EQ(s["networks"].size(), 2u);
  const json& intra = s["networks"][0];
  for (const char* key : {"bandwidth", "efficiency", "size", "latency", "ops", "must_be_filled", "processor_usage"})
    EXPECT_TRUE(intra.contains(key)) << key;
  EXPECT_NEAR(intra["bandwidth"].get<double>(), testing::kIntraBetaGbps, 2.0);  // GB/s
  EXPECT_NEAR(intra["latency"].get<double>(), testing::kIntraAlphaUs * 1e-6, 0.5e-6);  // seconds
  EXPECT_EQ(intra["size"], 4);
  EXPECT_EQ(intra["must_be_filled"], true);
  EXPECT_EQ(intra["ops"]["all_reduce"], json({2, -1}));
  EXPECT_EQ(intra["ops"]["all_gather"], json({1, -1}));
  EXPECT_EQ(intra["ops"]["reduce_scatter"], json({1, -1}));
  EXPECT_EQ(intra["ops"]["p2p"], json({1, nullptr}));
  EXPECT_TRUE(intra["processor_usage"].is_null());  // not measured: not invented
  EXPECT_EQ(s["networks"][1]["size"], 8);
  EXPECT_NEAR(s["networks"][1]["bandwidth"].get<double>(), testing::kInterBetaGbps, 0.5);
  const auto& unfilled = e.reports.at(0).unfilled;
  EXPECT_TRUE(std::any_of(unfilled.begin(), unfilled.end(),
                          [](const std::string& u) { return u.find("processor_usage") != std::string::npos; }));
}

TEST(ExportAstraSim, NetworkYamlPerDimensionAndSystemJson) {
  const Exported e = export_synthetic("astrasim");
  const std::string yml = testing::read_text(e.out + "/astrasim/network.yml");
  auto list_of = [&](const std::string& key) {
    std::smatch m;
    EXPECT_TRUE(std::regex_search(yml, m, std::regex("\n" + key + ": \\[ ([^\\]]*) \\]"))) << key << "\n" << yml;
    std::vector<std::string> items;
    std::stringstream ss(m[1].str());
    for (std::string item; std::getline(ss, item, ',');) items.push_back(std::regex_replace(item, std::regex(" "), ""));
    return items;
  };
  EXPECT_EQ(list_of("topology"), (std::vector<std::string>{"Switch", "Switch"}));
  EXPECT_EQ(list_of("npus_count"), (std::vector<std::string>{"4", "2"}));
  const auto bandwidth = list_of("bandwidth"), latency = list_of("latency");
  ASSERT_EQ(bandwidth.size(), 2u);
  EXPECT_NEAR(std::stod(bandwidth[0]), testing::kIntraBetaGbps, 2.0);  // GB/s
  EXPECT_NEAR(std::stod(latency[0]), testing::kP2pIntraAlphaUs * 1e3 / 2, 200.0);  // ns per hop
  const json sys = load_json(e.out + "/astrasim/system.json");
  EXPECT_TRUE(sys["local-mem-bw"].is_number());
  EXPECT_TRUE(sys["peak-perf"].is_number());
  EXPECT_LT(sys["peak-perf"].get<double>(), testing::kBf16PeakTflops);  // achieved, TFLOP/s
  EXPECT_EQ(sys["roofline-enabled"], 1);
  EXPECT_EQ(sys["all-reduce-implementation"].size(), 2u);
}

// The one-way latency the exporters use: a pingpong group's α is a round trip's, so half of
// it (osu_latency), preferred over sendrecv's per-message α; tiers do not mix.
TEST(ExportCommon, P2pLatencyPrefersHalfThePingpongRoundTrip) {
  auto group = [](const std::string& pattern, int spans_nodes, double alpha_us) {
    return json{{"pattern", pattern},
                {"spans_nodes", spans_nodes},
                {"alpha_beta", {{"alpha_us", alpha_us}, {"beta_gbps", 10.0}}}};
  };
  json calibration{{"communication", {{"p2p", json::array({group("bidir", 0, 9.0), group("sendrecv", 0, 3.0)})}}}};
  auto latency = p2p_latency(calibration, 0);
  ASSERT_TRUE(latency);
  EXPECT_EQ(latency->pattern, "sendrecv");
  EXPECT_DOUBLE_EQ(latency->us, 3.0);
  json& groups = calibration["communication"]["p2p"];
  groups.push_back(group("pingpong", 1, 50.0));  // the other tier
  groups.push_back({{"pattern", "pingpong"}, {"spans_nodes", 0}, {"alpha_beta", {{"error", "needs 3 distinct sizes"}}}});
  EXPECT_EQ(p2p_latency(calibration, 0)->pattern, "sendrecv");
  groups.push_back(group("pingpong", 0, 10.0));
  latency = p2p_latency(calibration, 0);
  EXPECT_EQ(latency->pattern, "pingpong");
  EXPECT_DOUBLE_EQ(latency->us, 5.0);
  EXPECT_DOUBLE_EQ(p2p_latency(calibration, 1)->us, 25.0);
  EXPECT_FALSE(p2p_latency(json{{"communication", {{"p2p", json::array()}}}}, 0));
}

TEST(ExportNersc, SystemJsonFieldsAndSigmoidForm) {
  const Exported e = export_synthetic("nersc");
  const json s = load_json(e.out + "/nersc/system.json");
  for (const char* key : {"matrix_flops_fp16", "hbm_bandwidth", "nvlink_bandwidth", "nvlink_eff", "nvlink_latency",
                          "ib_bandwidth", "ib_eff", "ib_latency", "nvlink_size"})
    EXPECT_TRUE(s[key].is_number()) << key << " in " << s.dump();
  ASSERT_TRUE(s.contains("nic_factor"));
  EXPECT_TRUE(s["nic_factor"].is_null());
  // bench_memory: fma_chain rates and the copy plateau beyond the caches.
  EXPECT_NEAR(s["vector_flops_fp32"].get<double>(), testing::kVectorTflops, 2.0);
  EXPECT_NEAR(s["vector_flops_fp16"].get<double>(), 2 * testing::kVectorTflops, 4.0);  // from bf16
  EXPECT_NEAR(s["hbm_bandwidth"].get<double>(), testing::kMemoryGbps, 0.05 * testing::kMemoryGbps);
  EXPECT_NEAR(s["nvlink_bandwidth"].get<double>(), testing::kIntraBetaGbps, 2.0);
  EXPECT_NEAR(s["ib_latency"].get<double>(), testing::kInterAlphaUs * 1e-6, 2e-6);
  EXPECT_EQ(s["nvlink_size"], 4);
  const json fits = load_json(e.out + "/nersc/comm_sigmoid_fits.json");
  // {op: {gpus_per_node: {nodes: [H, k, x0, y0]}}}
  ASSERT_TRUE(fits.contains("allreduce"));
  const json& one = fits["allreduce"]["4"]["1"];
  ASSERT_EQ(one.size(), 4u);
  for (const auto& v : one) EXPECT_TRUE(v.is_number());
  EXPECT_TRUE(fits["allreduce"]["4"].contains("2"));  // 8 ranks over 2 nodes
}

TEST(ExportVTrain, NcclTestsRowsPerGpuCountInOneMiBSteps) {
  const Exported e = export_synthetic("vtrain");
  const CsvTable t = CsvTable::read_file(e.out + "/vtrain/allreduce_4gpu_1node.csv");
  EXPECT_EQ(t.columns(), (std::vector<std::string>{"size(B)", "count", "type", "time(ns)", "busbw(GB/s)"}));
  ASSERT_EQ(t.row_count(), 1024u);  // 1 MiB .. 1 GiB
  EXPECT_EQ(t.get_double(0, "size(B)"), 1048576.0);
  EXPECT_EQ(t.get_double(1023, "size(B)"), 1073741824.0);
  EXPECT_EQ(t.get_string(0, "type"), "float");
  EXPECT_EQ(t.get_double(0, "count"), 1048576.0 / 4);
  for (std::size_t r : {std::size_t{0}, std::size_t{500}, std::size_t{1023}}) {
    const double size = t.get_double(r, "size(B)");
    const double model_ns = (testing::kIntraAlphaUs + size * 1.5 / (testing::kIntraBetaGbps * 1e3)) * 1e3;
    EXPECT_NEAR(t.get_double(r, "time(ns)") / model_ns, 1.0, 0.05) << size;
    EXPECT_NEAR(t.get_double(r, "busbw(GB/s)"), size * 1.5 / t.get_double(r, "time(ns)"), 1e-3);
  }
  EXPECT_TRUE(std::filesystem::exists(e.out + "/vtrain/allreduce_8gpu_2node.csv"));
}

TEST(Export, MissingInputsAreReportedNeverInvented) {
  const std::string dir = testing::fresh_temp_dir();
  std::ofstream(dir + "/gemm.csv")
      << "bench,point,status,regime,samples,time_us_median,time_us_p10,time_us_p90,dtype,m,n,k,batch,flops,tflops,"
         "peak_tflops\ngemm,a,ok,hot,10,1,1,1,bf16,64,64,64,1,524288,0.5,900\n";
  const json calibration = build_calibration(load_results_dir(dir));
  const auto reports = export_to(calibration, "all", dir + "/export");
  ASSERT_EQ(reports.size(), 4u);
  const json calculon = load_json(dir + "/export/calculon/system.json");
  EXPECT_TRUE(calculon["networks"].empty());
  EXPECT_TRUE(calculon["mem1"]["GBps"].is_null());
  const json nersc = load_json(dir + "/export/nersc/system.json");
  EXPECT_TRUE(nersc["nvlink_bandwidth"].is_null());
  EXPECT_TRUE(nersc["ib_latency"].is_null());
  EXPECT_TRUE(nersc["matrix_flops_fp16"].is_number());
  for (const auto& r : reports) {
    EXPECT_FALSE(r.unfilled.empty()) << r.consumer;
    const std::string text = format_export_report(r);
    EXPECT_NE(text.find("NOT FILLED"), std::string::npos);
  }
  EXPECT_TRUE(reports[3].files_written.empty());  // vtrain: no allreduce rows, no file
  EXPECT_THROW(export_to(calibration, "simai", dir), std::invalid_argument);
}

}  // namespace
}  // namespace gpucal::calibration
