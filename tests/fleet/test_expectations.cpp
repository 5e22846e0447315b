// The shipped expectations (expectations/*.json) and the reader's refusals.
#include <gtest/gtest.h>

#include <algorithm>

#include "app/check/expectations.h"
#include "app/common/results_dir.h"
#include "app/report/node_metrics.h"

#ifndef GPUCAL_TEST_EXPECTATIONS_DIR
#error GPUCAL_TEST_EXPECTATIONS_DIR must name the expectations folder
#endif

namespace gpucal::check {
namespace {

TEST(Expectations, ShippedFilesReadAndCarrySources) {
  const auto all = read_expectations_dir(GPUCAL_TEST_EXPECTATIONS_DIR);
  std::set<std::string> skus;
  for (const auto& e : all) {
    skus.insert(e.sku);
    EXPECT_FALSE(e.metrics.empty()) << e.path;
    for (const auto& [id, m] : e.metrics) {
      EXPECT_TRUE(fleet::metric_kind(id).known) << e.path << ": " << id;
      EXPECT_FALSE(m.typical.source.empty()) << e.path << ": " << id;
      EXPECT_FALSE(m.floor.source.empty()) << e.path << ": " << id;
      if (!m.typical.value) EXPECT_NE(m.typical.source.find("no published figure"), std::string::npos) << id;
    }
  }
  EXPECT_EQ(skus, (std::set<std::string>{"h100_sxm", "h100_pcie", "h200", "a100_sxm", "b200", "mi300x", "host"}));
}

TEST(Expectations, EachDeviceNameMatchesExactlyOneSku) {
  const auto all = read_expectations_dir(GPUCAL_TEST_EXPECTATIONS_DIR);
  const std::vector<std::tuple<std::string, std::string, std::string>> devices{
      {"NVIDIA H100 80GB HBM3", "cuda", "h100_sxm"}, {"NVIDIA H100 SXM5 80GB", "cuda", "h100_sxm"},
      {"NVIDIA H100 PCIe", "cuda", "h100_pcie"},     {"NVIDIA H200", "cuda", "h200"},
      {"NVIDIA A100-SXM4-80GB", "cuda", "a100_sxm"}, {"NVIDIA A100-SXM4-40GB", "cuda", "a100_sxm"},
      {"NVIDIA B200", "cuda", "b200"},               {"AMD Instinct MI300X", "hip", "mi300x"},
      {"Intel(R) Xeon(R) Processor", "host", "host"}};
  for (const auto& [name, backend, sku] : devices) {
    const auto found = match_sku(all, name, backend);
    ASSERT_TRUE(found) << name;
    EXPECT_EQ(found->sku, sku) << name;
  }
  EXPECT_FALSE(match_sku(all, "NVIDIA H200 NVL", "cuda"));
  EXPECT_FALSE(match_sku(all, "NVIDIA H100 NVL", "cuda"));
  EXPECT_FALSE(match_sku(all, "NVIDIA GeForce RTX 4090", "cuda"));
}

nlohmann::json minimal() {
  return nlohmann::json::parse(R"({"expectations_schema_version": 1, "sku": "x", "metrics": {"hbm_copy_gbps": {
    "unit": "GB/s", "better": "higher", "typical": {"value": 100, "source": "a"}, "floor": {"value": 90, "source": "b"}}}})");
}

void expect_refused(nlohmann::json doc, const std::string& why) {
  try {
    parse_expectations(doc, "x.json");
    ADD_FAILURE() << "accepted: " << doc.dump();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(Expectations, InvalidFilesAreRefusedWithTheField) {
  EXPECT_NO_THROW(parse_expectations(minimal(), "x.json"));
  auto d = minimal();
  d["expectations_schema_version"] = 2;
  expect_refused(d, "expectations_schema_version");
  d = minimal();
  d["metrics"]["hbm_copy_gbps"]["floor"]["source"] = "";
  expect_refused(d, "floor.source is empty");
  d = minimal();
  d["metrics"]["hbm_copy_gbps"]["unit"] = "MB/s";
  expect_refused(d, "gpucal measures hbm_copy_gbps in GB/s");
  d = minimal();
  d["metrics"]["hbm_copy_gbps"]["floor"]["value"] = 120;
  expect_refused(d, "does not meet the floor");
  d = minimal();
  d["match"] = {{"device_regex", "("}};
  expect_refused(d, "device_regex");
}

TEST(Expectations, ChecksPassFailAndWithoutVerdict) {
  const Expectations e = parse_expectations(minimal(), "x.json");
  fleet::MetricSet m;
  m["hbm_copy_gbps"] = {"hbm_copy_gbps", 80, "GB/s", fleet::Better::higher, "p"};
  auto lines = check_metrics(m, e);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].status, "fail");
  m["hbm_copy_gbps"].value = 95;
  EXPECT_EQ(check_metrics(m, e)[0].status, "pass");
  EXPECT_EQ(check_metrics({}, e)[0].status, "not measured");
  EXPECT_TRUE(meets(5, 10, fleet::Better::lower));
  EXPECT_FALSE(meets(11, 10, fleet::Better::lower));
}

// A figure beyond the device's peak is no measurement of it (XLA's published H100 fp8 table
// gives 2,424 TFLOP/s at 4096^3 against a dense peak of 1,979): it fails, naming the peak.
TEST(Expectations, AFigureAboveThePeakFailsAsNotPhysical) {
  const auto all = read_expectations_dir(GPUCAL_TEST_EXPECTATIONS_DIR);
  const auto h100 = match_sku(all, "NVIDIA H100 80GB HBM3", "cuda");
  ASSERT_TRUE(h100);
  ASSERT_TRUE(h100->metrics.at("gemm_fp8_tflops").peak.value);
  fleet::MetricSet m;
  m["gemm_fp8_tflops"] = {"gemm_fp8_tflops", 2423.754, "TFLOP/s", fleet::Better::higher, "gemm/xla-table/fp8"};
  auto line = check_metrics(m, *h100);
  const auto fp8 = std::find_if(line.begin(), line.end(), [](const CheckLine& l) { return l.metric == "gemm_fp8_tflops"; });
  ASSERT_NE(fp8, line.end());
  EXPECT_EQ(fp8->status, "fail");
  EXPECT_TRUE(fp8->above_peak);
  EXPECT_NE(fp8->detail.find("above the peak 1979"), std::string::npos) << fp8->detail;
  m["gemm_fp8_tflops"].value = 1300;  // below the peak, above the floor: a pass
  line = check_metrics(m, *h100);
  EXPECT_EQ(std::find_if(line.begin(), line.end(), [](const CheckLine& l) { return l.metric == "gemm_fp8_tflops"; })->status,
            "pass");
}


// An imported allreduce whose log names no hosts (empty nnodes) is no tier's figure: check makes
// no metric of it, where it used to read it as one node's and judge it against NVLink's floor.
TEST(Expectations, AnAllreduceOfUnknownNodesGivesNoMetric) {
  const std::string header =
      "schema_version,bench,impl,backend,device,point,status,collective,dtype,nranks,nnodes,ranks_per_node,"
      "spans_nodes,size_bytes,busbw_gbps,time_us_median\n";
  auto metrics = [&](const std::string& nnodes) {
    calibration::ResultsDir dir;
    calibration::BenchResults b;
    b.bench = "collectives";
    b.table = calibration::CsvTable::parse(header + "2,collectives,nccl-tests,cuda,H100,p,ok,allreduce,fp32,8," + nnodes +
                                               ",,,1073741824,400,5000\n",
                                           "collectives.csv");
    b.ok_rows = {0};
    dir.benches["collectives"] = b;
    return fleet::metrics_of(dir);
  };
  EXPECT_EQ(metrics("1").count("allreduce_busbw_gbps_n8"), 1u);
  EXPECT_EQ(metrics("2").count("allreduce_busbw_gbps_n8_nodes2"), 1u);
  EXPECT_TRUE(metrics("").empty());
}

}  // namespace
}  // namespace gpucal::check
