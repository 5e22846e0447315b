// gpucal import, nccl-tests and rccl-tests text and JSON: every *_perf binary, the layouts
// of the header's options and versions, launcher prefixes, and the ways a log goes wrong.
#include <gtest/gtest.h>

#include <algorithm>

#include "app/import/import_log.h"
#include "tests/calibration/import_test_util.h"

namespace gpucal::calibration {
namespace {

using testing::import_text;
using testing::nccl_column_header;
using testing::nccl_preamble;
using testing::nccl_row;
using testing::RowSpec;

std::string table(const std::vector<RowSpec>& rows) {
  std::string s = nccl_column_header();
  for (const auto& r : rows) s += nccl_row(r);
  return s + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n#\n";
}

TEST(ImportNcclTests, EveryPerfBinaryMapsToItsCollectiveAndSizeConvention) {
  const std::string dir = testing::fresh_temp_dir();
  struct Case {
    std::string program, collective, redop;
    int root;
    double factor;
  };
  const std::vector<Case> cases = {{"all_reduce_perf", "allreduce", "sum", -1, 1.5},
                                   {"all_gather_perf", "allgather", "none", -1, 0.75},
                                   {"reduce_scatter_perf", "reduce_scatter", "sum", -1, 0.75},
                                   {"alltoall_perf", "alltoall", "none", -1, 0.75},
                                   {"broadcast_perf", "broadcast", "none", 0, 1.0},
                                   {"reduce_perf", "reduce", "sum", 0, 1.0},
                                   {"sendrecv_perf", "sendrecv", "sum", -1, 1.0},
                                   {"gather_perf", "gather", "none", 0, 0.75},
                                   {"scatter_perf", "scatter", "none", 0, 0.75}};
  for (const auto& c : cases) {
    // 4 ranks on 2 hosts; S = 4096 B of fp32; a per-rank count where S is a total.
    const bool total = c.factor == 0.75;
    const std::string log =
        nccl_preamble(c.program, 2, 2) +
        table({{4096, total ? 256 : 1024, "float", c.redop, c.root, 20.0, 19.0, c.factor},
               {8192, total ? 512 : 2048, "float", c.redop, c.root, 22.0, 21.5, c.factor}});
    const auto runs = import_text(dir, log, {}, c.program + ".txt");
    ASSERT_EQ(runs.size(), 1u) << c.program;
    const ImportedRun& r = runs[0];
    EXPECT_EQ(r.collective, c.collective);
    EXPECT_EQ(r.program, c.program);
    EXPECT_EQ(r.nranks, 4);
    EXPECT_EQ(r.nnodes, 2);
    EXPECT_EQ(r.ranks_per_node, 2);
    EXPECT_EQ(r.device, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(r.tool_version, "nccl-tests 2.18.3");
    ASSERT_EQ(r.collectives.size(), 4u);  // two sizes, out-of-place and in-place
    EXPECT_DOUBLE_EQ(r.collectives[0].size_bytes, 4096);
    EXPECT_FALSE(r.collectives[0].in_place);
    EXPECT_TRUE(r.collectives[1].in_place);
    EXPECT_DOUBLE_EQ(r.collectives[1].time_us, 19.0);
    EXPECT_EQ(r.collectives[0].root, c.root);
    EXPECT_EQ(r.collectives[0].op, c.redop == "none" ? "" : c.redop);
    EXPECT_EQ(r.collectives[0].iterations, 20);
    EXPECT_EQ(r.collectives[0].dtype, "fp32");
  }
}

TEST(ImportNcclTests, OldHeadersRankLinesWithoutGroupAndErrorColumns) {
  // nccl-tests 2.0-era output: no version line, rank lines without "Group", an "error" column
  // printed as a float, no redop/root columns.
  const std::string dir = testing::fresh_temp_dir();
  const std::string log =
      "$ mpirun -np 2 -H a:1,b:1 ./build/all_reduce_perf -b 65536 -e 131072 -f 2 -g 1\n"
      "# nThread 1 nGpus 1 minBytes 65536 maxBytes 131072 step: 2(factor) warmup iters: 5 iters: 20 "
      "validation: 1\n"
      "#\n# Using devices\n"
      "#   Rank  0 Pid   1320 on          a device  0 [0x00] Tesla V100-SXM2-16GB\n"
      "#   Rank  1 Pid   2066 on          b device  0 [0x00] Tesla V100-SXM2-16GB\n"
      "#\n#                                                     out-of-place                       in-place\n"
      "#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "#        (B)    (elements)            (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "       65536         16384   float    16.57    3.96    3.96  0e+00    13.83    4.74    4.74  0e+00\n"
      "      131072         32768   float    23.07    5.68    5.68  0e+00    18.39    7.13    7.13  0e+00\n"
      "# Out of bounds values : 0 OK\n";
  const auto runs = import_text(dir, log);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].collective, "allreduce");  // from the command line
  EXPECT_NE(runs[0].command_line.find("mpirun -np 2"), std::string::npos);
  EXPECT_EQ(runs[0].nranks, 2);
  EXPECT_EQ(runs[0].nnodes, 2);
  EXPECT_EQ(runs[0].device, "Tesla V100-SXM2-16GB");
  ASSERT_EQ(runs[0].collectives.size(), 4u);
  EXPECT_EQ(runs[0].collectives[0].op, "");
  EXPECT_EQ(*runs[0].collectives[0].wrong, 0);
}

TEST(ImportNcclTests, ValidationOffWrongElementsGraphCputimeAndAverageModes) {
  const std::string dir = testing::fresh_temp_dir();
  // -c 0: #wrong is N/A; -G 10: graph launches; -C 1: cputime columns; -a 3 on the command line.
  const std::string log =
      "mpirun -np 4 ./all_reduce_perf -b 4K -e 8K -c 0 -G 10 -C 1 -a 3\n" +
      nccl_preamble("all_reduce_perf", 1, 4)
          .replace(nccl_preamble("all_reduce_perf", 1, 4).find("graph: 0"), 8, "graph: 10") +
      "#                                                              out-of-place                       "
      "in-place\n"
      "#       size         count      type   redop    root  cputime   algbw   busbw #wrong  cputime   algbw "
      "  busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s) "
      " (GB/s)\n" +
      nccl_row({4096, 1024, "float", "sum", -1, 30.0, 31.0, 1.5, "N/A", "N/A"}) +
      nccl_row({8192, 2048, "float", "sum", -1, 33.0, 34.0, 1.5, "N/A", "N/A"});
  const auto runs = import_text(dir, log);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].graph);
  EXPECT_FALSE(runs[0].validated);
  EXPECT_FALSE(runs[0].collectives[0].wrong.has_value());
  EXPECT_EQ(runs[0].rank_combine, "maximum over ranks (-a 3)");
  EXPECT_NE(std::find(runs[0].notes.begin(), runs[0].notes.end(), "times are CPU time (-C 1), not GPU time"),
            runs[0].notes.end());

  // Wrong elements are kept as a number (the writer turns the row into an error).
  const auto bad = import_text(dir,
                               nccl_preamble("all_reduce_perf", 1, 2) +
                                   table({{4096, 1024, "float", "sum", -1, 20.0, 20.0, 1.0, "3", "0"},
                                          {8192, 2048, "float", "sum", -1, 21.0, 21.0, 1.0, "0", "0"}}),
                               {}, "wrong.txt");
  EXPECT_EQ(*bad[0].collectives[0].wrong, 3);
}

TEST(ImportNcclTests, RcclTestsLinesCyclesInPlaceOnlyAndMissingDeviceNames) {
  const std::string dir = testing::fresh_temp_dir();
  // rccl-tests: its Version line, library lines, -N 2 cycles, -O 0 (in-place only), rank lines
  // without a device name (some ROCm systems print none).
  std::string log =
      "# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 agg iters: "
      "1 "
      "validation: 1 graph: 0\n#\nrccl-tests: Version develop:5272cd1\n# Using devices\n"
      "#  Rank  0 Group  0 Pid 2908511 on mi355-gpu-23 device  0 [0000:75:00]\n"
      "#  Rank  1 Group  0 Pid 2908512 on mi355-gpu-23 device  1 [0000:05:00]\n"
      "RCCL version : 2.26.6-HEAD:6ade506\nHIP version  : 7.0.51831-a3e329ad8\n#\n"
      "#                                                              in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n"
      "# Testing 1 cycle.\n"
      "        1024           256     float     sum      -1    10.00    0.10    0.10      0\n"
      "        2048           512     float     sum      -1    11.00    0.19    0.19      0\n"
      "# Testing 2 cycle.\n"
      "        1024           256     float     sum      -1    10.50    0.10    0.10      0\n"
      "        2048           512     float     sum      -1    11.20    0.18    0.18      0\n"
      "# Errors with asterisks indicate errors that have exceeded the maximum threshold.\n";
  ImportOptions options;
  options.collective = "allreduce";
  options.device = "AMD Instinct MI355X";
  const auto runs = import_text(dir, log, options);
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& r = runs[0];
  EXPECT_EQ(r.format, "rccl-tests");
  EXPECT_EQ(r.impl, "rccl-tests");
  EXPECT_EQ(r.backend, "hip");
  EXPECT_EQ(r.tool_version, "rccl-tests develop:5272cd1");
  EXPECT_EQ(r.device, "AMD Instinct MI355X");  // from --device: the log has none
  ASSERT_EQ(r.collectives.size(), 4u);
  EXPECT_TRUE(r.collectives[0].in_place);
  EXPECT_EQ(r.collectives[0].cycle, 0);
  EXPECT_EQ(r.collectives[2].cycle, 1);
  EXPECT_TRUE(std::any_of(r.hardware_lines.begin(), r.hardware_lines.end(),
                          [](const std::string& l) { return l.rfind("RCCL version", 0) == 0; }));
}

TEST(ImportNcclTests, LauncherPrefixesZeroByteRowsAndATruncatedTail) {
  const std::string dir = testing::fresh_temp_dir();
  // mpirun --tag-output prefixes on every line, rank 1's NCCL INFO lines interleaved, zero-byte
  // rows, and the log cut in the middle of its last row.
  std::string body = nccl_preamble("all_reduce_perf", 2, 1) + nccl_column_header() +
                     nccl_row({0, 0, "float", "sum", -1, 6.36, 6.40, 1.0}) +
                     nccl_row({1024, 256, "float", "sum", -1, 20.0, 19.5, 1.0}) +
                     "test-worker-1:21:21 [0] NCCL INFO comm 0x1 rank 1 nranks 2 - Init COMPLETE\n" +
                     nccl_row({2048, 512, "float", "sum", -1, 21.0, 20.5, 1.0}) +
                     "        4096          1024     float";
  std::string tagged;
  std::size_t start = 0;
  while (start < body.size()) {
    const std::size_t end = body.find('\n', start);
    const std::string line = body.substr(start, end == std::string::npos ? std::string::npos : end - start);
    tagged += (line.find("test-worker-1") != std::string::npos ? "[1,1]<stdout>:" : "[1,0]<stdout>:") + line +
              (end == std::string::npos ? "" : "\n");
    start = end == std::string::npos ? body.size() : end + 1;
  }
  const auto runs = import_text(dir, tagged);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].collectives.size(), 4u);  // 1024 and 2048, both blocks
  const auto& notes = runs[0].notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& n) { return n.find("zero-byte") != std::string::npos; }));
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& n) { return n.find("ends mid-row") != std::string::npos; }));

  // srun -l labels ("0: ") and kubectl --timestamps work the same way.
  std::string labelled;
  for (std::size_t s = 0, e; s < body.size(); s = e + 1) {
    e = body.find('\n', s);
    if (e == std::string::npos) break;
    labelled += "2026-02-16T10:00:01.000000000Z 0: " + body.substr(s, e - s) + "\n";
  }
  EXPECT_EQ(import_text(dir, labelled, {}, "labelled.txt")[0].collectives.size(), 4u);
}

TEST(ImportNcclTests, HeadlessLogsInferRanksAndLeaveNodesUnknown) {
  const std::string dir = testing::fresh_temp_dir();
  // Only the table: the rank count follows from busbw/algbw (16 ranks: 1.875), the collective
  // needs --collective; the node count is unknown (0) and said so, naming --ranks-per-node.
  const std::string log = nccl_column_header() +
                          nccl_row({1048576, 262144, "float", "sum", -1, 100.0, 99.0, 1.875}) +
                          nccl_row({2097152, 524288, "float", "sum", -1, 150.0, 151.0, 1.875});
  ImportOptions options;
  options.collective = "allreduce";
  const auto headless = import_text(dir, log, options);
  EXPECT_EQ(headless[0].nranks, 16);
  EXPECT_EQ(headless[0].nnodes, 0);
  EXPECT_EQ(headless[0].ranks_per_node, 0);
  EXPECT_EQ(headless[0].nodes_from, "unknown");
  EXPECT_TRUE(std::any_of(headless[0].unknown.begin(), headless[0].unknown.end(), [](const std::string& u) {
    return u.find("ranks per node") != std::string::npos && u.find("--ranks-per-node N") != std::string::npos;
  }));
  options.ranks_per_node = 8;
  const auto runs = import_text(dir, log, options);
  EXPECT_EQ(runs[0].nranks, 16);
  EXPECT_EQ(runs[0].nranks_from, "busbw/algbw");
  EXPECT_EQ(runs[0].nnodes, 2);
  EXPECT_FALSE(runs[0].unknown.empty());
  // A wrong --nranks contradicts the printed busbw/algbw: refused with the row's line.
  options.nranks = 8;
  try {
    import_text(dir, log, options);
    FAIL() << "busbw/algbw of 16 ranks must not import as 8";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("log.txt:4:"), std::string::npos) << e.what();
  }
}

TEST(ImportNcclTests, SeveralBinariesAndDatatypesInOneFile) {
  const std::string dir = testing::fresh_temp_dir();
  // -d all: rows of several types in one table; then a second binary's run in the same file.
  const std::string log =
      nccl_preamble("all_reduce_perf", 1, 2) +
      table({{4096, 1024, "float", "sum", -1, 20, 20, 1.0},
             {4096, 2048, "bfloat16", "sum", -1, 21, 21, 1.0},
             {4096, 4096, "f8e4m3", "sum", -1, 22, 22, 1.0}}) +
      nccl_preamble("all_gather_perf", 1, 2) +
      table({{4096, 512, "half", "none", -1, 25, 25, 0.5}, {8192, 1024, "half", "none", -1, 26, 26, 0.5}});
  const auto runs = import_text(dir, log);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].collective, "allreduce");
  EXPECT_EQ(runs[0].collectives[2].dtype, "bf16");
  EXPECT_EQ(runs[0].collectives[4].dtype, "fp8_e4m3");
  EXPECT_EQ(runs[1].collective, "allgather");
  EXPECT_EQ(runs[1].collectives[0].dtype, "fp16");
}

TEST(ImportNcclTests, PerIterationAndTimestampColumns) {
  const std::string dir = testing::fresh_temp_dir();
  const std::string log = nccl_preamble("all_reduce_perf", 1, 2) +
                          "#                                                              out-of-place (+ "
                          "per-iteration)   in-place (+ per-iteration)\n"
                          "#       size         count      type   redop    root     time   algbw   busbw  "
                          "#wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    "
                          "i_min    i_max    i_p99    i_cv% timestamp\n"
                          "        4096          1024     float     sum      -1    20.00    0.20    0.20     "
                          "  0    19.10    22.00    21.90     2.10    21.00    0.20    0.20       0    20.10 "
                          "   23.00    22.90     2.20 2026-01-02 10:11:12\n"
                          "        8192          2048     float     sum      -1    22.00    0.37    0.37     "
                          "  0    21.10    24.00    23.90     2.10    23.00    0.36    0.36       0    22.10 "
                          "   25.00    24.90     2.20 2026-01-02 10:11:13\n";
  const auto runs = import_text(dir, log);
  ASSERT_EQ(runs[0].collectives.size(), 4u);
  EXPECT_DOUBLE_EQ(runs[0].collectives[1].time_us, 21.0);
  EXPECT_DOUBLE_EQ(runs[0].collectives[2].size_bytes, 8192);
}

TEST(ImportNcclTests, MalformedLogsNameTheFileAndLine) {
  const std::string dir = testing::fresh_temp_dir();
  auto error_of = [&](const std::string& text, const ImportOptions& options = {}) -> std::string {
    try {
      import_text(dir, text, options, "bad.txt");
    } catch (const ImportError& e) {
      return e.what();
    }
    return "";
  };
  // A row with a missing field in the middle of the table.
  std::string log = nccl_preamble("all_reduce_perf", 1, 2) + nccl_column_header() +
                    nccl_row({4096, 1024, "float", "sum", -1, 20, 20, 1.0}) +
                    "        8192          2048     float     sum      -1    22.00    0.37\n" +
                    nccl_row({16384, 4096, "float", "sum", -1, 25, 25, 1.0});
  EXPECT_NE(error_of(log).find("bad.txt:14: data row has 7 fields"), std::string::npos) << error_of(log);
  // A corrupted number.
  log = nccl_preamble("all_reduce_perf", 1, 2) + nccl_column_header() +
        "        4096          1024     float     sum      -1    2x.00    0.20    0.20      0    20.00    "
        "0.20    0.20      0\n";
  EXPECT_NE(error_of(log).find("bad.txt:13:"), std::string::npos) << error_of(log);
  // algbw that is not size/time.
  log = nccl_preamble("all_reduce_perf", 1, 2) + nccl_column_header() +
        "        4096          1024     float     sum      -1    20.00    9.99    9.99      0    20.00    "
        "0.20    0.20      0\n";
  EXPECT_NE(error_of(log).find("does not match size/time"), std::string::npos) << error_of(log);
  // Not a log at all.
  EXPECT_NE(error_of("hello\nworld\n").find("bad.txt:1: unknown log format"), std::string::npos);
  // A table whose collective nothing names fits both allgather and alltoall.
  EXPECT_NE(error_of(nccl_column_header() + nccl_row({4096, 128, "float", "none", -1, 20, 20, 0.875}))
                .find("allgather or alltoall"),
            std::string::npos);
  // An unknown column in the header.
  EXPECT_NE(
      error_of(
          "#       size         count      type   redop    root     time   algbw   busbw #wrong   bogus\n"
          "        4096          1024     float     sum      -1    20.00    0.20    0.20      0    1\n")
          .find("bad.txt:1:"),
      std::string::npos);
}

TEST(ImportNcclTestsJson, ReadsTheJOutputOfNcclTests) {
  // The -J file of nccl-tests src/util.cu (JSON file version 3), written by hand from the format.
  const std::string dir = testing::fresh_temp_dir();
  const std::string json = R"({"version": 3, "start_time": "2026-01-02 10:00:00",
    "args": ["/opt/nccl-tests/build/all_gather_perf", "-b", "1K", "-e", "2K", "-J", "out.json"],
    "env": [], "nccl_version": 22703,
    "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 1024, "maximum_bytes": 2048, "step_factor": 2,
               "warmup_iters": 5, "iterations": 20, "aggregated_iterations": 1, "validation": 1, "graph": 0,
               "devices": [
                 {"rank": 0, "group": 0, "pid": 11, "hostname": "n0", "device": 0, "device_hex": "0000:18:00", "device_info": "NVIDIA B200"},
                 {"rank": 1, "group": 0, "pid": 12, "hostname": "n1", "device": 0, "device_hex": "0000:18:00", "device_info": "NVIDIA B200"}]},
    "results": [
      {"size": 0, "count": 0, "type": "float", "redop": "none", "root": "    -1",
       "out_of_place": {"time": 5.0, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
       "in_place": {"time": 5.0, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0}, "actual_iterations": 20, "experiment_name": ""},
      {"size": 1024, "count": 128, "type": "float", "redop": "none", "root": "    -1",
       "out_of_place": {"time": 10.0, "alg_bw": 0.1024, "bus_bw": 0.0512, "nwrong": 0.0},
       "out_of_place_per_iter": {"skipped_iterations": 0, "min_us": 9.0, "max_us": 12.0, "avg_us": 10.0, "p50_us": 9.8},
       "in_place": {"time": 9.5, "alg_bw": 0.107789, "bus_bw": 0.053895, "nwrong": null}, "actual_iterations": 20, "experiment_name": ""},
      {"size": 2048, "count": 256, "type": "float", "redop": "none", "root": "    -1",
       "out_of_place": null,
       "in_place": {"time": 11.0, "alg_bw": 0.186182, "bus_bw": 0.093091, "nwrong": 0.0}, "actual_iterations": 20, "experiment_name": ""}],
    "out_of_bounds": {"count": 0, "okay": true}, "average_bus_bandwidth": {"bandwidth": 0.05, "okay": "unchecked"},
    "errors": [], "end_time": "2026-01-02 10:00:01"})";
  const auto runs = import_log(testing::write_file(dir, "out.json", json), {});
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& r = runs[0];
  EXPECT_EQ(r.format, "nccl-tests-json");
  EXPECT_EQ(r.collective, "allgather");
  EXPECT_EQ(r.nranks, 2);
  EXPECT_EQ(r.nnodes, 2);
  EXPECT_EQ(r.device, "NVIDIA B200");
  ASSERT_EQ(r.collectives.size(), 3u);  // the zero-byte result and the null out_of_place skipped
  EXPECT_DOUBLE_EQ(*r.collectives[0].p50_us, 9.8);
  EXPECT_DOUBLE_EQ(*r.collectives[0].iter_min_us, 9.0);
  EXPECT_FALSE(r.collectives[1].wrong.has_value());
  EXPECT_TRUE(r.collectives[2].in_place);

  try {
    import_log(testing::write_file(dir, "broken.json", "{\"results\": [1, 2"), {});
    FAIL() << "malformed JSON must throw";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos);
  }
}

// A log run through a wrapper script names no *_perf program; the wrapper's own word for the
// collective (-t all_gather) does, where the table alone fits allgather and alltoall alike.
TEST(ImportNcclTests, AWrappersCollectiveWordNamesTheCollective) {
  const std::string dir = testing::fresh_temp_dir();
  std::string preamble = nccl_preamble("all_gather_perf", 1, 4);
  preamble.erase(preamble.find("# Collective test starting"), std::string("# Collective test starting: all_gather_perf\n").size());
  const std::string rows = table({{4096, 256, "float", "none", -1, 20.0, 19.0, 0.75},
                                  {8192, 512, "float", "none", -1, 22.0, 21.5, 0.75}});
  // Without the wrapper's line the table fits two collectives and the import asks which.
  try {
    import_text(dir, preamble + rows, {}, "bare.txt");
    ADD_FAILURE() << "a table that fits allgather and alltoall imported without a name";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("alltoall"), std::string::npos) << e.what();
  }
  for (const std::string wrapper : {"$ ./run_nccl_tests.sh -t all_gather -b 4096 -e 8192 -g 1\n",
                                    "srun -N 1 ./nccl_bench.sh --collective=allgather\n"}) {
    const auto runs = import_text(dir, wrapper + preamble + rows, {}, "wrapped.txt");
    ASSERT_EQ(runs.size(), 1u) << wrapper;
    EXPECT_EQ(runs[0].collective, "allgather") << wrapper;
    EXPECT_NE(runs[0].collective_from.find("the command line's '"), std::string::npos) << runs[0].collective_from;
    EXPECT_FALSE(runs[0].command_line.empty());
  }
  // nccl-tests' own -t is a thread count, no collective's name: the table decides as before.
  EXPECT_THROW(import_text(dir, "$ ./build/run.sh -t 2\n" + preamble + rows, {}, "threads.txt"), ImportError);
}

}  // namespace
}  // namespace gpucal::calibration
