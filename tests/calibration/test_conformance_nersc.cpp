// Conformance of the NERSC export with what transformer-perf-estimates (54278b0) requires, as
// read in estimates.py (Estimates.__init__, get_time_flops, get_time_mem, get_time_comm),
// layers.py (Linear: flops = b·l·f·(e mults + (e-1) adds)) and execution.py (hbm_capacity,
// nvlink_size). The tool itself cannot run in CI.
#include <gtest/gtest.h>

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
using testing::nersc_comm_s;

std::vector<std::string> nersc_settings() {
  return {"vector_tflops=60"};
}

json export_nersc_of(const json& calibration, const std::vector<std::string>& settings,
                     const std::string& dir, ExportReport* report_out = nullptr) {
  const ExportReport r = export_with("nersc", calibration, ExportSettings::parse(settings), dir);
  if (report_out) *report_out = r;
  if (!r.ok()) return nullptr;
  return json::parse(testing::read_text(dir + "/nersc/system.json"));
}

TEST(ConformanceNersc, EveryKeyTheToolReadsIsANumberInItsUnits) {
  const std::string dir = testing::fresh_temp_dir();
  ExportReport r;
  const json s = export_nersc_of(conformance_calibration(), nersc_settings(), dir, &r);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  testing::expect_nersc_system(s);
  EXPECT_EQ(s["nvlink_size"], testing::kGpusPerNode);
  EXPECT_DOUBLE_EQ(s["element_size"].get<double>(), 2e-9);  // bf16 GEMMs: 2 bytes, in GB
  EXPECT_DOUBLE_EQ(s["flops_units"].get<double>(), 1e-12);  // flops in TFLOP <-> TFLOP/s rates
  EXPECT_DOUBLE_EQ(s["hbm_bandwidth"].get<double>(), testing::kCopyGbps);
  EXPECT_NEAR(s["hbm_capacity"].get<double>(), testing::kDeviceMemoryGiB * 1.073741824, 1e-9);  // GB
  EXPECT_NEAR(s["vector_flops_fp16"].get<double>(), 60.0 / 0.8, 1e-9);  // undoes hardware_flops *= 0.8
}

// get_time_flops: 20 µs + flops / (0.8·matrix_flops_fp16) reproduces the reference GEMM (the
// fastest one longer than 40 µs: 8192³ here) exactly, with the tool's (2k-1) flop count.
TEST(ConformanceNersc, MatrixRateMakesTheToolsGemmTimeOurs) {
  const std::string dir = testing::fresh_temp_dir();
  const json s = export_nersc_of(conformance_calibration(), nersc_settings(), dir);
  ASSERT_TRUE(s.is_object());
  const double m = 8192, n = 8192, k = 8192;
  const double theirs_s = testing::nersc_gemm_s(s, m, n, k);
  const double ours_s = 2 * m * n * k / (testing::gemm_truth_tflops(m, n, k) * 1e12);
  EXPECT_NEAR(theirs_s / ours_s, 1.0, 1e-9);
  // Not our achieved rate: the tool's 0.8 and 20 µs are compensated.
  EXPECT_GT(s["matrix_flops_fp16"].get<double>(), testing::gemm_truth_tflops(m, n, k) / 0.8);
}

// One node, default nersc_comm_op=allgather_reducescatter: the tool's allgather and reduce-scatter together take
// ours, each within the spread of their two bandwidths; with nersc_comm_op=allreduce its
// one-node allreduce (no factor 2) takes ours.
TEST(ConformanceNersc, OneNodeCollectivesReproduceTheChosenOp) {
  const std::string dir = testing::fresh_temp_dir();
  const json s = export_nersc_of(conformance_calibration(), nersc_settings(), dir);
  ASSERT_TRUE(s.is_object());
  const int n = testing::kGpusPerNode;
  for (double size : {1048576.0, 256.0 * 1048576}) {
    const double vol_gb = size / 1e9;
    const double pair =
        nersc_comm_s(s, vol_gb, n, "allgather", n) + nersc_comm_s(s, vol_gb, n, "reducescatter", n);
    const double ours = testing::truth_time_us("allgather", n, false, size) +
                        testing::truth_time_us("reduce_scatter", n, false, size);
    EXPECT_NEAR(pair * 1e6 / ours, 1.0, 0.01) << size;
  }
  const json ar =
      export_nersc_of(conformance_calibration(), {"vector_tflops=60", "nersc_comm_op=allreduce"}, dir);
  ASSERT_TRUE(ar.is_object());
  for (double size : {1048576.0, 256.0 * 1048576})
    EXPECT_NEAR(nersc_comm_s(ar, size / 1e9, n, "allreduce", n) * 1e6 /
                    testing::truth_time_us("allreduce", n, false, size),
                1.0, 0.01)
        << size;
}

// nersc_comm_op=allgather: the tool's one-node allgather alone is ours (the default's pair is not).
TEST(ConformanceNersc, AllgatherSettingReproducesAllgatherAlone) {
  const std::string dir = testing::fresh_temp_dir();
  const json s = export_nersc_of(conformance_calibration(), {"vector_tflops=60", "nersc_comm_op=allgather"}, dir);
  ASSERT_TRUE(s.is_object());
  const int n = testing::kGpusPerNode;
  for (double size : {1048576.0, 256.0 * 1048576})
    EXPECT_NEAR(nersc_comm_s(s, size / 1e9, n, "allgather", n) * 1e6 / testing::truth_time_us("allgather", n, false, size),
                1.0, 0.01)
        << size;
}

// Two nodes of 8: the multi-node branch (x2 for allreduce, nic_factor·topology·ib_bandwidth)
// reproduces the measured 16-rank allreduce; nic_factor does not change it.
TEST(ConformanceNersc, MultiNodeAllreduceIsOurs) {
  const std::string dir = testing::fresh_temp_dir();
  for (const char* nic : {"nic_factor=1", "nic_factor=0.5"}) {
    const json s = export_nersc_of(conformance_calibration(), {"vector_tflops=60", nic}, dir);
    ASSERT_TRUE(s.is_object());
    for (double size : {4.0 * 1048576, 512.0 * 1048576})
      EXPECT_NEAR(nersc_comm_s(s, size / 1e9, 16, "allreduce", 8) * 1e6 /
                      testing::truth_time_us("allreduce", 16, true, size),
                  1.0, 0.02)
          << nic << " " << size;
  }
}

TEST(ConformanceNersc, OneNodeRunRefusesWithoutIbFiguresAndTakesThemBySet) {
  const std::string dir = testing::fresh_temp_dir();
  ExportReport r;
  EXPECT_TRUE(export_nersc_of(conformance_calibration(false), nersc_settings(), dir, &r).is_null());
  ASSERT_EQ(r.refused.size(), 1u);
  EXPECT_NE(r.refused[0].find("--set inter_busbw_gbps="), std::string::npos) << r.refused[0];
  const json s = export_nersc_of(conformance_calibration(false),
                                 {"vector_tflops=60", "inter_busbw_gbps=40", "inter_alpha_us=20"}, dir, &r);
  ASSERT_TRUE(s.is_object()) << format_export_report(r);
  EXPECT_NEAR(s["ib_bandwidth"].get<double>(), 40.0 / testing::kGpusPerNode, 1e-9);  // per NIC
  EXPECT_NEAR(s["ib_latency"].get<double>(), 20e-6, 1e-12);
}

}  // namespace
}  // namespace gpucal::calibration
