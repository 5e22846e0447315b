// Conformance of the XLA export with what XLA reads (openxla/xla xla/service/gpu/model/):
// matmul_interpolator.cc builds EuclideanWeightedAverageInterpolator<4> over (b, m, k, n) with
// power-of-two neighbours, contexts batch 1-4 and m, n, k 256-4096, and looks each corner up with
// retrieval_.at() (a missing one aborts); collective_interpolator.cc keys by opcode, device list
// and (for reductions) element type, then looks up power-of-two transfer sizes clamped to
// 1 KiB-1 GiB the same way. The files are read here with protobuf's text format against
// app/import/xla_perf_table.proto (XLA's message and field names and numbers), strictly: a field
// XLA does not declare fails the parse. The round trip on XLA's own H100 tables and the encoding
// with XLA's own .proto files: export.xla_round_trip and docs/verified.md.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "app/export/export_common.h"
#include "app/export/export_registry.h"
#include "app/export/export_settings.h"
#include "app/import/xla_perf_table.pb.h"
#include "tests/calibration/conformance_calibration.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

template <class Message>
Message read_strictly(const std::string& path) {
  Message m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(testing::read_text(path), &m)) << path;
  return m;
}

TEST(ConformanceXla, EveryGridCornerXlasMatmulInterpolatorLooksUpIsThere) {
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r = export_with("xla", testing::conformance_calibration(), {}, dir);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  const auto table = read_strictly<::xla::GemmPerfTable>(dir + "/xla/matmul_perf_table.txtpb");
  ASSERT_EQ(table.entries_size(), 1);
  EXPECT_EQ(table.entries(0).key(), "sm_90");  // HloOpProfiles::GetDeviceSpecificProfileName of an H100
  std::map<std::string, std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>>> points;
  for (const auto& e : table.entries(0).value().entries())
    for (const auto& f : e.flops()) {
      EXPECT_GT(f.value(), 0);
      points[f.key()].insert({e.b(), e.m(), e.n(), e.k()});
    }
  ASSERT_TRUE(points.count("bf16xbf16->bf16"));
  for (const auto& [key, shapes] : points) {
    for (int64_t b : {1, 2, 4})
      for (int64_t m = 256; m <= 4096; m *= 2)
        for (int64_t n = 256; n <= 4096; n *= 2)
          for (int64_t k = 256; k <= 4096; k *= 2) EXPECT_TRUE(shapes.count({b, m, n, k})) << key << " " << m;
    EXPECT_EQ(shapes.size(), 375u) << key;
  }
  // A shape the calibration measured carries its measured figure.
  bool checked = false;
  for (const auto& e : table.entries(0).value().entries())
    if (e.b() == 1 && e.m() == 4096 && e.n() == 4096 && e.k() == 4096)
      for (const auto& f : e.flops())
        if (f.key() == "bf16xbf16->bf16") {
          EXPECT_NEAR(f.value() / (testing::gemm_truth_tflops(4096, 4096, 4096) * 1e12), 1.0, 1e-6);
          checked = true;
        }
  EXPECT_TRUE(checked);
}

TEST(ConformanceXla, EveryPowerOfTwoTransferSizeOfEveryIntraNodeGroupAtItsMeasuredThroughput) {
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport r = export_with("xla", testing::conformance_calibration(), {}, dir);
  ASSERT_TRUE(r.ok()) << format_export_report(r);
  const auto table = read_strictly<::xla::DeviceHloInstructionProfiles>(dir + "/xla/collective_perf_table.txtpb");
  ASSERT_EQ(table.entries_size(), 1);
  const std::map<std::string, std::string> collective_of{{"all-reduce", "allreduce"},
                                                         {"all-gather", "allgather"},
                                                         {"reduce-scatter", "reduce_scatter"},
                                                         {"all-to-all", "alltoall"}};
  std::map<std::pair<std::string, int64_t>, std::set<double>> sizes;
  for (const auto& p : table.entries(0).value().entries()) {
    const auto& instr = p.instruction();
    ASSERT_TRUE(collective_of.count(instr.opcode())) << instr.opcode();
    const std::string collective = collective_of.at(instr.opcode());
    const int64_t n = instr.iota_collective_device_list().num_devices_per_group();
    EXPECT_LE(n, testing::kGpusPerNode);  // one host's devices
    ASSERT_EQ(instr.shape().dimensions_size(), 1);
    const int esize = instr.shape().element_type() == ::xla::BF16 ? 2 : 4;
    // S: the output shape, times n for reduce-scatter (XLA's collective_perf_table_gen).
    const double s = static_cast<double>(instr.shape().dimensions(0)) * esize *
                     (collective == "reduce_scatter" ? static_cast<double>(n) : 1.0);
    sizes[{collective, n}].insert(s);
    const double time_us = s / static_cast<double>(p.network_throughput_bytes_per_sec()) * 1e6;
    EXPECT_NEAR(time_us / testing::truth_time_us(collective, static_cast<int>(n), false, s), 1.0, 0.02)
        << collective << " n" << n << " " << s;
  }
  ASSERT_FALSE(sizes.empty());
  for (const auto& [group, measured] : sizes)
    for (double s = 1024; s <= 1024.0 * 1024 * 1024; s *= 2)
      if (group.first != "reduce_scatter" || std::fmod(s / 4 / group.second, 1.0) == 0)
        EXPECT_TRUE(measured.count(s)) << group.first << " n" << group.second << " " << s;
}

TEST(ConformanceXla, AnUnknownDeviceIsRefusedUntilItsKeyIsSet) {
  nlohmann::json calibration = testing::conformance_calibration();
  for (auto& [bench, sidecar] : calibration["run_metadata"].items()) {
    (void)bench;
    if (sidecar.contains("device")) sidecar["device"]["name"] = "Acme GPU 9000";
  }
  const std::string dir = testing::fresh_temp_dir();
  const ExportReport refused = export_with("xla", calibration, {}, dir);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.refused.front().find("'Acme GPU 9000' is not one gpucal knows: pass --set xla_device_key=KEY"),
            std::string::npos)
      << refused.refused.front();
  const ExportReport set = export_with("xla", calibration, ExportSettings::parse({"xla_device_key=sm_90"}), dir);
  ASSERT_TRUE(set.ok()) << format_export_report(set);
  EXPECT_EQ(read_strictly<::xla::GemmPerfTable>(dir + "/xla/matmul_perf_table.txtpb").entries(0).key(), "sm_90");
}

}  // namespace
}  // namespace gpucal::calibration
