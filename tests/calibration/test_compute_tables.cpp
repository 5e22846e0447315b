#include <gtest/gtest.h>

#include "app/common/calibration_json.h"
#include "app/fit/calibration_build.h"
#include "app/fit/compute_tables.h"
#include "app/fit/memory_tables.h"
#include "app/common/results_dir.h"
#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

TEST(StepTable, BucketsByLog2AndLooksUpCalculonStyle) {
  const StepTable t = step_table_by_log2_bucket({{0.5, 0.2}, {1.5, 0.5}, {1.9, 0.7}, {100, 0.9}});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[0].first, 64.0);  // descending thresholds: 2^6, 2^0, 2^-1
  EXPECT_DOUBLE_EQ(t[0].second, 0.9);
  EXPECT_DOUBLE_EQ(t[1].first, 1.0);
  EXPECT_DOUBLE_EQ(t[1].second, 0.6);  // median of 0.5 and 0.7
  EXPECT_DOUBLE_EQ(t[2].first, 0.5);
  EXPECT_EQ(step_lookup(t, 1000.0), 0.9);
  EXPECT_EQ(step_lookup(t, 2.0), 0.6);
  EXPECT_FALSE(step_lookup(t, 0.1).has_value());
}

TEST(ComputeTables, GemmBestThroughputAndEfficiencyTables) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir);
  std::vector<std::string> warnings;
  const nlohmann::json g = gemm_tables(*load_results_dir(dir).find("gemm"), warnings);
  ASSERT_TRUE(g.contains("bf16"));
  ASSERT_TRUE(g.contains("fp32"));
  const auto& bf16 = g["bf16"];
  // The largest GEMM is the best; its efficiency ~0.9 * F/(F + 5 GFLOP) of the 900 peak.
  EXPECT_NEAR(bf16["best_tflops"].get<double>(), 900.0 * 0.9 * 137.4e9 / (137.4e9 + 5e9), 15.0);
  EXPECT_EQ(bf16["efficiency_reference"], "peak_tflops");
  const auto& table = bf16["gflops_efficiency"];
  ASSERT_GE(table.size(), 3u);
  for (std::size_t i = 1; i < table.size(); ++i) EXPECT_LT(table[i][0].get<double>(), table[i - 1][0].get<double>());
  EXPECT_GT(table.front()[1].get<double>(), table.back()[1].get<double>());  // big ops are more efficient
  EXPECT_EQ(bf16["by_shape"].size(), 18u);
  EXPECT_TRUE(warnings.empty());
}

TEST(ComputeTables, RowsAbovePeakAreExcludedWithAWarning) {
  const std::string dir = testing::fresh_temp_dir();
  std::ofstream(dir + "/gemm.csv")
      << "bench,point,status,regime,samples,time_us_median,time_us_p10,time_us_p90,dtype,m,n,k,batch,flops,tflops,"
         "peak_tflops\n"
         "gemm,a,ok,hot,10,1,1,1,bf16,64,64,64,1,524288,500,900\n"
         "gemm,b,ok,hot,10,1,1,1,bf16,128,128,128,1,4194304,11731,900\n"
         "gemm,c,error,hot,0,0,0,0,bf16,256,256,256,1,1,1,900\n";
  std::vector<std::string> warnings;
  const nlohmann::json g = gemm_tables(*load_results_dir(dir).find("gemm"), warnings);
  EXPECT_DOUBLE_EQ(g["bf16"]["best_tflops"].get<double>(), 500.0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("above peak"), std::string::npos);
}

// An fp8 table measured on Hopper says how its rows accumulated where they agree: XLA's tables fast,
// bench_gemm's cuBLASLt rows split (FAST_ACCUM left at 0); a mix, rows of unknown origin, or
// another device, nothing.
TEST(ComputeTables, Fp8TableSaysHowItAccumulated) {
  auto table_of = [](const std::string& impl_a, const std::string& impl_b,
                     const std::string& device = "NVIDIA H100 80GB HBM3") {
    const std::string dir = testing::fresh_temp_dir();
    std::ofstream(dir + "/gemm.csv")
        << "bench,impl,backend,device,point,status,regime,samples,time_us_median,time_us_p10,time_us_p90,dtype,m,n,"
           "k,batch,flops,tflops,peak_tflops\n"
           "gemm," << impl_a << ",cuda," << device << ",a,ok,hot,10,1,1,1,fp8_e4m3,4096,4096,4096,1,1.37e11,1000,1979\n"
           "gemm," << impl_b << ",cuda," << device << ",b,ok,hot,10,1,1,1,fp8_e4m3,2048,2048,2048,1,1.7e10,800,1979\n"
           "gemm," << impl_b << ",cuda," << device << ",c,ok,hot,10,1,1,1,bf16,2048,2048,2048,1,1.7e10,600,989\n";
    std::vector<std::string> warnings;
    return gemm_tables(*load_results_dir(dir).find("gemm"), warnings);
  };
  EXPECT_EQ(table_of("xla-table", "xla-table-derived")["fp8_e4m3"].value("accumulation", ""), "fast");
  EXPECT_EQ(table_of("cublaslt", "cublaslt")["fp8_e4m3"].value("accumulation", ""), "split");
  EXPECT_FALSE(table_of("cublaslt", "xla-table")["fp8_e4m3"].contains("accumulation"));
  EXPECT_FALSE(table_of("host", "host")["fp8_e4m3"].contains("accumulation"));
  EXPECT_FALSE(table_of("cublaslt", "cublaslt")["bf16"].contains("accumulation"));
  EXPECT_EQ(table_of("xla-table", "xla-table", "sm_90")["fp8_e4m3"].value("accumulation", ""), "fast");
  // Blackwell's fp8 has no fast mode: nothing to say.
  EXPECT_FALSE(table_of("xla-table", "xla-table", "sm_100_B200")["fp8_e4m3"].contains("accumulation"));
  EXPECT_FALSE(table_of("cublaslt", "cublaslt", "NVIDIA B200")["fp8_e4m3"].contains("accumulation"));
  EXPECT_EQ(fp8_accumulation_of("cublaslt", "cuda", "NVIDIA H200"), "split");
  EXPECT_EQ(fp8_accumulation_of("cublaslt", "rocm", "NVIDIA H100 80GB HBM3"), "");
}

TEST(ComputeTables, MemoryAndAttentionTables) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir);
  const ResultsDir results = load_results_dir(dir);
  std::vector<std::string> missing;
  const nlohmann::json m = memory_section(results.find("p2p"), nullptr, missing);
  const auto& copy = m["d2d_copy"];
  EXPECT_NEAR(copy["best_gbps"].get<double>(), testing::kCopyPeakGbps * 1073741824.0 / (1073741824.0 + 4e6), 40.0);
  const auto& mb = copy["MB_efficiency"];
  EXPECT_NEAR(mb.front()[0].get<double>(), 1073.741824, 1e-6);  // MB = 1e6 B
  EXPECT_NEAR(mb.front()[1].get<double>(), 1.0, 1e-12);
  EXPECT_LT(mb.back()[1].get<double>(), 0.01);
  std::vector<std::string> warnings;
  const nlohmann::json a = attention_tables(*results.find("attention"), warnings);
  ASSERT_EQ(a.size(), 2u);  // head_dim 64 and 128
  EXPECT_EQ(a[0]["head_dim"], 64);
  EXPECT_EQ(a[0]["by_seq"].size(), 4u);
  EXPECT_GT(a[1]["by_seq"][3]["efficiency"].get<double>(), a[1]["by_seq"][0]["efficiency"].get<double>());
}

TEST(CalibrationJson, IsVersionedAndListsWhatIsMissing) {
  const std::string dir = testing::fresh_temp_dir();
  std::ofstream(dir + "/gemm.csv")
      << "bench,point,status,regime,samples,time_us_median,time_us_p10,time_us_p90,dtype,m,n,k,batch,flops,tflops,"
         "peak_tflops\ngemm,a,ok,hot,10,1,1,1,bf16,64,64,64,1,524288,0.5,900\n";
  const nlohmann::json doc = build_calibration(load_results_dir(dir));
  EXPECT_EQ(doc["calibration_schema_version"], kCalibrationSchemaVersion);
  EXPECT_TRUE(doc["memory"].is_null());
  EXPECT_TRUE(doc["communication"]["collectives"].empty());
  EXPECT_GE(doc["missing"].size(), 3u);
  write_json_file(doc, dir + "/calibration.json");
  EXPECT_EQ(read_calibration_file(dir + "/calibration.json"), doc);
  std::ofstream(dir + "/other.json") << "{\"calibration_schema_version\": 99}";
  EXPECT_THROW(read_calibration_file(dir + "/other.json"), std::runtime_error);
}

}  // namespace
}  // namespace gpucal::calibration
