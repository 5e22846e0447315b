// Helpers of the importer tests: nccl-tests-shaped rows and headers (the printf formats of
// nccl-tests src/util.cu), written to a file and read back with import_log().
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/import/import_log.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration::testing {

// A path given relative to this test binary (the build folder may move: cmake/GpucalTesting.cmake).
inline std::string beside_test_binary(const std::string& relative) {
  return (std::filesystem::canonical("/proc/self/exe").parent_path() / relative).lexically_normal().string();
}

// The collected public logs (tests/fixtures/comm_logs, copied into the build tree).
inline std::string comm_log(const std::string& name) {
#ifndef GPUCAL_FIXTURES_RELATIVE
#error "GPUCAL_FIXTURES_RELATIVE must name tests/fixtures/comm_logs relative to the test binary"
#endif
  return beside_test_binary(GPUCAL_FIXTURES_RELATIVE) + "/" + name + ".log";
}

// The gpucal built beside the test binaries.
inline std::string gpucal_binary() {
#ifndef GPUCAL_BIN_RELATIVE
#error "GPUCAL_BIN_RELATIVE must name the gpucal executable relative to the test binary"
#endif
  return beside_test_binary(GPUCAL_BIN_RELATIVE);
}

// Runs `gpucal ARGS`; its exit code, with stdout and stderr in `output` (and DIR/gpucal.log).
inline int run_gpucal(const std::string& args, std::string& output, const std::string& dir) {
  return run_command(gpucal_binary() + " " + args, output, dir + "/gpucal.log");
}

inline std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// One data row as nccl-tests prints it; algbw and busbw computed from size, time and factor.
struct RowSpec {
  long long size = 0, count = 0;
  std::string type = "float", redop = "sum";
  int root = -1;
  double time_oop = 0, time_ip = 0;
  double factor = 1.0;
  std::string wrong_oop = "0", wrong_ip = "0";
};

inline std::string nccl_row(const RowSpec& r) {
  char buf[256];
  std::string line;
  std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s  %6i", r.size, r.count, r.type.c_str(),
                r.redop.c_str(), r.root);
  line = buf;
  for (const auto& [time, wrong] : {std::pair{r.time_oop, r.wrong_oop}, std::pair{r.time_ip, r.wrong_ip}}) {
    const double algbw = static_cast<double>(r.size) / time / 1e3;
    std::snprintf(buf, sizeof buf, "  %7.2f  %6.2f  %6.2f  %6s", time, algbw, algbw * r.factor,
                  wrong.c_str());
    line += buf;
  }
  return line + "\n";
}

inline std::string nccl_column_header() {
  return "#                                                              out-of-place                       "
         "in-place\n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
         "algbw   busbw #wrong\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
         "(GB/s)  (GB/s)\n";
}

// The header block of nccl-tests 2.17+: version, program, parameters, rank lines for
// `ranks_per_host` ranks on each of `hosts` hosts.
inline std::string nccl_preamble(const std::string& program, int hosts, int ranks_per_host,
                                 const std::string& gpu = "NVIDIA H100 80GB HBM3",
                                 const std::string& extra = "") {
  std::string s =
      "# nccl-tests version 2.18.3 nccl-headers=22703 nccl-library=22703\n"
      "# Collective test starting: " +
      program +
      "\n"
      "# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg "
      "iters: 1 validation: 1 graph: 0" +
      extra + "\n#\n# Using devices\n";
  char buf[256];
  for (int h = 0; h < hosts; ++h)
    for (int d = 0; d < ranks_per_host; ++d) {
      std::snprintf(buf, sizeof buf, "#  Rank %2d Group  0 Pid %6d on %8s device %2d [0000:%02x:00] %s\n",
                    h * ranks_per_host + d, 1000 + h * 100 + d, ("node-" + std::to_string(h)).c_str(), d,
                    16 + d, gpu.c_str());
      s += buf;
    }
  return s + "NCCL version 2.26.2+cuda12.8\n#\n";
}

inline std::vector<ImportedRun> import_text(const std::string& dir, const std::string& text,
                                            const ImportOptions& options = {},
                                            const std::string& name = "log.txt") {
  return import_log(write_file(dir, name, text), options);
}

}  // namespace gpucal::calibration::testing
