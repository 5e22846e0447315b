// The exporters' shared machinery: --set parsing, the communication figure lookup (group choice,
// bandwidth-regime fit, p2p), refusals, and the whole path from a results folder of CSVs. What
// each consumer requires is checked in test_conformance_<consumer>.cpp.
#include <gtest/gtest.h>

#include <set>

#include <cmath>

#include "app/fit/calibration_build.h"
#include "tests/calibration/conformance_calibration.h"
#include "app/export/export_comm.h"
#include "app/export/export_common.h"
#include "app/export/export_figures.h"
#include "app/common/results_dir.h"
#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

using nlohmann::json;

TEST(ExportSettings, ParsesKnownKeysAndRejectsBadOnesWithTheItemNamed) {
  const ExportSettings s = ExportSettings::parse(
      {"processor_usage=0.05", "nodes=64", "nersc_comm_op=allreduce", "vtrain_gpu_name=A100"});
  EXPECT_DOUBLE_EQ(*s.number("processor_usage"), 0.05);
  EXPECT_DOUBLE_EQ(*s.number("nodes"), 64);
  EXPECT_EQ(*s.word("nersc_comm_op"), "allreduce");
  EXPECT_FALSE(s.number("memory_gbps"));
  auto error_of = [](const std::vector<std::string>& items) {
    try {
      ExportSettings::parse(items);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of({"processor_usag=0.05"}).find("unknown key 'processor_usag'"), std::string::npos);
  EXPECT_NE(error_of({"processor_usage=1.5"}).find("fraction"), std::string::npos);
  for (const char* figure : {"memory_gbps=-3", "memory_gbps=1e308", "memory_gbps=1e-300", "inter_alpha_us=0"})
    EXPECT_NE(error_of({figure}).find("expected a number from 1e-6 to 1e9"), std::string::npos) << figure;
  EXPECT_NE(error_of({"vtrain_gpu_name=.."}).find("not '..'"), std::string::npos);
  EXPECT_NE(error_of({"memory_gbps=fast"}).find("not a number"), std::string::npos);
  EXPECT_NE(error_of({"memory_gbps=nan"}).find("not a number"), std::string::npos);
  EXPECT_NE(error_of({"nodes=2.5"}).find("integer"), std::string::npos);
  EXPECT_NE(error_of({"nersc_comm_op=broadcast"}).find("allgather | allreduce"), std::string::npos);
  EXPECT_NE(error_of({"vtrain_gpu_name=a/b"}).find("name"), std::string::npos);
  EXPECT_NE(error_of({"nodes=2", "nodes=3"}).find("twice"), std::string::npos);
  EXPECT_NE(error_of({"nodes"}).find("KEY=VALUE"), std::string::npos);
  // comm_bytes is a size: whole bytes, suffixes like every size axis, no wrap-around.
  EXPECT_DOUBLE_EQ(*ExportSettings::parse({"comm_bytes=32M"}).number("comm_bytes"), 32.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(*ExportSettings::parse({"comm_bytes=1048576"}).number("comm_bytes"), 1048576.0);
  for (const char* bad : {"comm_bytes=1e19", "comm_bytes=1e300", "comm_bytes=0.5", "comm_bytes=0", "comm_bytes=-4",
                          "comm_bytes=8P"})
    EXPECT_NE(error_of({bad}).find("expected a size in bytes from 1 to 2^52"), std::string::npos) << bad;
  EXPECT_EQ(error_of({"comm_bytes=0"}).find("----"), std::string::npos) << error_of({"comm_bytes=0"});
}

TEST(ExportComm, TakesTheAskedGroupSizeAndItsBandwidthRegime) {
  const json c = testing::conformance_calibration();
  const auto f = collective_figure(c, "allgather", 4, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->provenance, "measured");
  EXPECT_EQ(f->nranks_measured, 4);
  EXPECT_NEAR(f->busbw_gbps, testing::comm_truth("allgather", 4, false).busbw_gbps, 1e-6);
  EXPECT_NEAR(f->alpha_us, testing::comm_truth("allgather", 4, false).alpha_us, 1e-6);
  EXPECT_NE(f->source.find("the largest measured sizes"), std::string::npos) << f->source;
  // Not measured, between measured rank counts: the communication models interpolate (bus
  // bandwidth in log2 n), said so; beyond them they extrapolate.
  const auto between = collective_figure(c, "allreduce", 6, 0);
  ASSERT_TRUE(between);
  EXPECT_EQ(between->provenance, "interpolated") << between->source;
  EXPECT_EQ(between->nranks_asked, 6);
  const double bw4 = testing::comm_truth("allreduce", 4, false).busbw_gbps,
               bw8 = testing::comm_truth("allreduce", 8, false).busbw_gbps;
  EXPECT_GT(between->busbw_gbps, std::min(bw4, bw8) * 0.999);
  EXPECT_LT(between->busbw_gbps, std::max(bw4, bw8) * 1.001);
  const auto beyond = collective_figure(c, "allreduce", 16, 0);
  ASSERT_TRUE(beyond);
  EXPECT_EQ(beyond->provenance, "extrapolated") << beyond->source;
  EXPECT_EQ(beyond->nranks_measured, 8);
  EXPECT_FALSE(collective_figure(c, "alltoall", 8, 0));
  EXPECT_FALSE(collective_figure(testing::conformance_calibration(false), "allreduce", 16, 1));
}

// The bandwidth regime: small sizes on a different curve (a latency knee) do not bend the α–β
// the tools get for the sizes a training step uses.
TEST(ExportComm, SmallMessageKneeDoesNotBendTheExportedBandwidth) {
  json c = testing::conformance_calibration();
  for (json& g : c["communication"]["collectives"])
    for (json& p : g["points"])
      if (p["size_bytes"].get<double>() < 65536) p["time_us_median"] = p["time_us_median"].get<double>() * 3;
  const auto f = collective_figure(c, "allreduce", 8, 0);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->busbw_gbps / testing::comm_truth("allreduce", 8, false).busbw_gbps, 1.0, 1e-3);
}

// --set comm_bytes: where the measured curve is not α–β shaped, the exported α–β is the curve's
// secant at that size, exact at the two measured sizes around it; when the secant's intercept is
// negative (bus bandwidth falling with size, as on a host when buffers leave the caches), α = 0
// and the bandwidth of that size, still exact there.
TEST(ExportComm, CommBytesTakesTheSecantOfTheMeasuredCurveThere) {
  for (double exponent : {-0.1, 0.2}) {
    json c = testing::conformance_calibration();
    for (json& g : c["communication"]["collectives"])
      for (json& p : g["points"])
        p["time_us_median"] =
            p["time_us_median"].get<double>() * std::pow(p["size_bytes"].get<double>() / 1e6, exponent);
    const double size = 32.0 * 1048576;
    auto measured_at = [&](double s) {
      for (const json& g : c["communication"]["collectives"])
        if (g["collective"] == "allreduce" && g["nranks"] == 8)
          for (const json& p : g["points"])
            if (p["size_bytes"] == s) return p["time_us_median"].get<double>();
      return 0.0;
    };
    const auto secant = collective_figure(c, "allreduce", 8, 0, size);
    ASSERT_TRUE(secant);
    EXPECT_NE(secant->source.find("33554432 B (comm_bytes)"), std::string::npos) << secant->source;
    const double f = testing::bus_factor("allreduce", 8);
    auto model = [&](const CommFigure& x, double s) { return x.alpha_us + s * f / (x.busbw_gbps * 1e3); };
    EXPECT_NEAR(model(*secant, size) / measured_at(size), 1.0, 1e-9) << exponent;
    if (exponent < 0)
      EXPECT_NEAR(model(*secant, size / 2) / measured_at(size / 2), 1.0, 1e-9);
    else
      EXPECT_EQ(secant->alpha_us, 0.0);
    const auto regime = collective_figure(c, "allreduce", 8, 0);  // the >= 1 MiB fit is off there
    EXPECT_GT(std::abs(model(*regime, size) / measured_at(size) - 1), 0.02) << exponent;
  }
}

TEST(ExportComm, P2pPrefersSendrecvAndHalvesPingpongRoundTrips) {
  auto group = [](const std::string& pattern, int spans_nodes, double alpha_us, double beta_gbps) {
    json points = json::array();
    for (double s = 1 << 20; s <= (1 << 28); s *= 4)
      points.push_back({{"size_bytes", s}, {"time_us_median", alpha_us + s / (beta_gbps * 1e3)}});
    return json{{"pattern", pattern}, {"direction", "uni"}, {"spans_nodes", spans_nodes}, {"points", points}};
  };
  json c{{"communication",
          {{"p2p", json::array({group("pingpong", 0, 10.0, 20.0), group("bidir", 0, 1.0, 1.0)})}}}};
  auto f = p2p_figure(c, 0);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->collective, "pingpong");
  EXPECT_NEAR(f->alpha_us, 5.0, 1e-6);     // one way: half a round trip
  EXPECT_NEAR(f->busbw_gbps, 40.0, 1e-6);  // a round trip moves the size twice
  c["communication"]["p2p"].push_back(group("sendrecv", 0, 3.0, 30.0));
  f = p2p_figure(c, 0);
  EXPECT_EQ(f->collective, "sendrecv");
  EXPECT_NEAR(f->alpha_us, 3.0, 1e-6);
  EXPECT_FALSE(p2p_figure(c, 1));
}

TEST(ExportFigures, ReferenceGemmIsTheFastestLongEnoughShape) {
  const auto g = reference_gemm(testing::conformance_calibration(), "bf16");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->m, 8192);
  EXPECT_EQ(g->k, 8192);
  EXPECT_GE(g->time_us, kReferenceGemmMinUs);
  EXPECT_NEAR(g->time_us, g->flops / (testing::gemm_truth_tflops(8192, 8192, 8192) * 1e6), 1e-6);
  EXPECT_FALSE(reference_gemm(testing::conformance_calibration(), "fp8"));
}

// bench_memory's section of calibration.json (device_bandwidth_gbps, copy_MB_efficiency,
// vector.<dtype>.best_tflops) fills the memory and vector figures without --set; cache-resident
// sizes faster than memory are capped at efficiency 1 (Calculon asserts eff <= 1).
TEST(ExportFigures, MemorySectionFillsMemoryAndVectorFigures) {
  json c = testing::conformance_calibration();
  c["memory"] = {{"device_bandwidth_gbps", 2900.0},
                 {"device_bandwidth_source", "bench_memory copy fp32, memory plateau"},
                 {"copy_MB_efficiency", json::array({json::array({1000.0, 1.0}), json::array({10.0, 1.4}),
                                                     json::array({0.01, 0.2})})},
                 {"vector", {{"fp32", {{"best_tflops", 60.0}}}, {"bf16", {{"best_tflops", 110.0}}}}}};
  const ExportSettings none;
  const auto bw = memory_bandwidth_gbps(c, none);
  ASSERT_TRUE(bw);
  EXPECT_EQ(bw->value, 2900.0);
  EXPECT_NE(bw->source.find("memory plateau"), std::string::npos);
  EXPECT_EQ(memory_mb_efficiency(c, none), json::parse("[[1000.0, 1.0], [10.0, 1.0], [0, 0.2]]"));
  EXPECT_EQ(vector_tflops(c, none, {"fp16", "bf16", "fp32"})->value, 110.0);
  EXPECT_EQ(vector_tflops(c, none, {"fp32"})->value, 60.0);
  EXPECT_FALSE(vector_tflops(c, none, {"fp16"}));
  EXPECT_EQ(vector_tflops(c, ExportSettings::parse({"vector_tflops=5"}), {"fp16"})->value, 5.0);
  // Calculon and NERSC then export with only the figures no bench measures.
  const std::string dir = testing::fresh_temp_dir();
  const auto reports = export_to(c, "all", dir, ExportSettings::parse({"processor_usage=0.05", "offload_gbps=50",
                                                                       "offload_gib=512", "nodes=16"}));
  for (const auto& r : reports) EXPECT_TRUE(r.ok()) << format_export_report(r);
  const json calculon = json::parse(testing::read_text(dir + "/calculon/system.json"));
  EXPECT_EQ(calculon["vector"]["bfloat16"]["tflops"], 110.0);
  EXPECT_EQ(calculon["mem1"]["GBps"], 2900.0);
  const json nersc = json::parse(testing::read_text(dir + "/nersc/system.json"));
  EXPECT_NEAR(nersc["vector_flops_fp16"].get<double>(), 110.0 / 0.8, 1e-9);  // bf16: no fp16 rows
}

TEST(Export, RefusedConsumerWritesNothingAndEveryLineNamesItsRemedy) {
  const std::string dir = testing::fresh_temp_dir();
  std::ofstream(dir + "/gemm.csv") << "bench,point,status,regime,samples,time_us_median,time_us_p10,time_us_"
                                      "p90,dtype,m,n,k,batch,flops,tflops,"
                                      "peak_tflops\ngemm,a,ok,hot,10,1,1,1,bf16,64,64,64,1,524288,0.5,900\n";
  const json calibration = build_calibration(load_results_dir(dir));
  const auto reports = export_to(calibration, "all", dir + "/export");
  ASSERT_EQ(reports.size(), 5u);
  for (const auto& r : reports) {
    EXPECT_FALSE(r.ok()) << r.consumer;
    EXPECT_TRUE(r.files_written.empty()) << r.consumer;
    for (const auto& line : r.refused) {
      EXPECT_EQ(line.find('\n'), std::string::npos) << line;
      EXPECT_TRUE(line.find("measure it with") != std::string::npos ||
                  line.find("--set") != std::string::npos)
          << line;
    }
    const std::string text = format_export_report(r);
    EXPECT_NE(text.find("REFUSED, nothing written"), std::string::npos) << text;
    EXPECT_EQ(format_export_report(r, false).find("missing:"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/export"));
  EXPECT_THROW(export_to(calibration, "no-such-tool", dir), std::invalid_argument);
}

// --to all on a host calibration leaves out the GPU-only targets (XLA's tables describe a GPU).
TEST(Export, AllLeavesTheGpuOnlyTargetsOutForAHostCalibration) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir + "/results");
  json calibration = build_calibration(load_results_dir(dir + "/results"));
  const auto consumers = [&]() {
    std::set<std::string> names;
    for (const auto& r : export_to(calibration, "all", dir + "/export-" + std::to_string(names.size()))) names.insert(r.consumer);
    return names;
  };
  EXPECT_TRUE(consumers().count("xla"));
  for (auto& [bench, sidecar] : calibration["run_metadata"].items()) {
    (void)bench;
    if (sidecar.contains("device")) sidecar["device"]["backend"] = "host";
  }
  const auto host = consumers();
  EXPECT_FALSE(host.count("xla"));
  EXPECT_TRUE(host.count("vtrain"));
  EXPECT_EQ(export_to(calibration, "xla", dir + "/export-xla").front().consumer, "xla");  // named, it runs
}

// From CSV rows through fit to every consumer's files, with the figures a host run lacks set.
TEST(Export, SyntheticResultsFolderExportsEveryConsumerWithSettings) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir + "/results");
  const json calibration = build_calibration(load_results_dir(dir + "/results"));
  const ExportSettings settings = ExportSettings::parse(
      {"vector_tflops=60", "processor_usage=0.05", "offload_gbps=50", "offload_gib=512", "nodes=4",
       "xla_device_key=sm_90"});
  // The synthetic folder has no reduce_scatter and its inter-node group is allreduce only, so
  // Calculon refuses the missing ops' figures; NERSC, ASTRA-sim, vTrain and XLA export.
  const auto reports = export_to(calibration, "all", dir + "/export", settings);
  ASSERT_EQ(reports.size(), 5u);
  EXPECT_FALSE(reports[0].ok());
  for (const auto& line : reports[0].refused) EXPECT_EQ(line.rfind("networks[", 0), 0u) << line;
  for (std::size_t i = 1; i < 5; ++i) EXPECT_TRUE(reports[i].ok()) << format_export_report(reports[i]);
  EXPECT_TRUE(std::filesystem::exists(dir + "/export/xla/matmul_perf_table.txtpb"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/export/nersc/system.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/export/astrasim/network.yml"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/export/vtrain/synthetic_gpu/AR_GPU4_1M_1024M_LUT"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/export/vtrain/NOTES.md"));
}

}  // namespace
}  // namespace gpucal::calibration
