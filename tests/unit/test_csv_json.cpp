// Golden tests of the output formats: the exact CSV bytes and the sidecar's keys.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/backend/backend.h"
#include "core/output/csv_sink.h"
#include "core/output/metadata.h"

using namespace gpucal;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(CsvSink, GoldenHeaderAndRowsFlushedAsWritten) {
  const std::string path = testing::TempDir() + "/golden.csv";
  CsvSink sink(path, {"m", "tflops"});
  std::string header;
  for (const auto& c : common_columns()) header += c + ",";
  header += "m,tflops\n";
  EXPECT_EQ(slurp(path + ".partial"), header);  // header on disk before any row, under the partial name
  Row r;
  r.set("bench", "gemm").set("point", "a,b \"q\"").set("m", int64_t{64}).set("tflops", 1.5).set("status", "ok");
  sink.write(r);
  // Schema version 2 appended suspect and process_run to the common block.
  ASSERT_GE(common_columns().size(), 10u);
  EXPECT_EQ(common_columns()[common_columns().size() - 2], "suspect");
  EXPECT_EQ(common_columns().back(), "process_run");
  // Row is on disk immediately (flushed), with quoting, schema_version and process_run (0 when
  // unset: one process) filled in.
  const std::string expected_row =
      "2,gemm,,,,\"a,b \"\"q\"\"\",,ok," + std::string(common_columns().size() - 9, ',') + "0,64,1.5\n";
  EXPECT_EQ(slurp(path + ".partial"), header + expected_row);
  Row bad;
  bad.set("not_a_column", "x");
  EXPECT_THROW(sink.write(bad), std::logic_error);
  sink.close();  // complete: renamed into place
  EXPECT_EQ(slurp(path), header + expected_row);
  EXPECT_FALSE(std::ifstream(path + ".partial").good());
}

TEST(CsvSink, NumberFormatting) {
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(123456789.0), "1.234568e+08");
  EXPECT_EQ(format_number(std::nan("")), "nan");
  EXPECT_EQ(sidecar_path("dir/run.csv", ".json"), "dir/run.json");
  EXPECT_EQ(sidecar_path("run", ".json"), "run.json");
}

TEST(CsvSink, SamplesFileIsLongFormat) {
  const std::string path = testing::TempDir() + "/s.csv";
  {
    SamplesSink s(path);
    s.write("p/1", 0, {1e-6, 2.5e-6});
    s.write("p/1", 1, {3e-6});  // a second repetition of the same point
    s.close();
  }
  EXPECT_EQ(slurp(path), "point,sample,time_us,repetition\np/1,0,1,0\np/1,1,2.5,0\np/1,0,3,1\n");
}

TEST(Metadata, SidecarHasTheRunFacts) {
  auto backend = make_backend("host");
  RunConfig cfg;
  cfg.bench = "gemm";
  cfg.command_line = {"bench_gemm", "--m", "64"};
  Metadata meta(cfg, *backend);
  meta.add_library("cublasLt", "13.0.0");
  meta.finish(3, 1, 1);
  const std::string path = testing::TempDir() + "/meta.json";
  meta.write(path);
  auto j = nlohmann::json::parse(slurp(path));
  for (const char* key : {"metadata_schema_version", "csv_schema_version", "bench", "gpucal", "command_line",
                          "start_time", "end_time", "device", "host", "environment", "measurement", "libraries", "rows"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["command_line"][1], "--m");
  EXPECT_EQ(j["libraries"]["cublasLt"], "13.0.0");
  EXPECT_TRUE(j["libraries"].contains("openblas"));
  EXPECT_EQ(j["device"]["backend"], "host");
  EXPECT_GT(j["device"]["compute_units"].get<int>(), 0);
  EXPECT_EQ(j["rows"], 3);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["gpucal"]["git_commit"].get<std::string>().size() >= 7, true);
}

// The sidecar's loaded_libraries: files the loader really mapped, C runtime left out.
TEST(CsvJson, LoadedLibrariesNameTheFilesActuallyLoaded) {
  const nlohmann::json libs = gpucal::loaded_libraries_json();
  bool openblas = false;
  for (const auto& l : libs) {
    const std::string name = l["name"];
    EXPECT_EQ(name.rfind("libc.so", 0), std::string::npos);
    EXPECT_EQ(name.rfind("libstdc++", 0), std::string::npos);
    if (name.rfind("libopenblas", 0) == 0) {
      openblas = true;
      EXPECT_EQ(l["path"].get<std::string>().front(), '/');
    }
  }
  EXPECT_TRUE(openblas) << libs.dump();
}

TEST(Metadata, LibraryShapingEnvironmentIsRecordedAndCoretypeWarned) {
  const char* set[][2] = {{"OPENBLAS_CORETYPE", "Haswell"}, {"OPENBLAS_L2_SIZE", "262144"}, {"OMP_PROC_BIND", "close"},
                          {"OMPI_MCA_coll_tuned_use_dynamic_rules", "1"}, {"UCX_TLS", "sm,self"},
                          {"NCCL_ALGO", "Ring"}, {"HSA_ENABLE_SDMA", "0"}, {"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  for (const auto& kv : set) setenv(kv[0], kv[1], 1);
  setenv("GPUCAL_TEST_UNRELATED", "x", 1);
  const nlohmann::json env = environment_json();
  for (const auto& kv : set) {
    ASSERT_TRUE(env.contains(kv[0])) << kv[0];
    EXPECT_EQ(env[kv[0]], kv[1]);
  }
  EXPECT_FALSE(env.contains("GPUCAL_TEST_UNRELATED"));
  const auto warnings = environment_warnings(env);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("OPENBLAS_CORETYPE=Haswell OPENBLAS_L2_SIZE=262144"), std::string::npos);
  for (const auto& kv : set) unsetenv(kv[0]);
  unsetenv("GPUCAL_TEST_UNRELATED");
  EXPECT_TRUE(environment_warnings(environment_json()).empty());
}
