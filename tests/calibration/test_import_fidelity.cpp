// gpucal import as nccl-tests printed its logs: the collective told from a table that does not
// name it, the printed digits' rounding (interval arithmetic), Open MPI tags inside a line, the
// formats registry and its CSV reader, and every collected public log imported with no flags.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "app/import/import_formats.h"
#include "app/import/import_numbers.h"
#include "app/import/import_text.h"
#include "tests/calibration/import_test_util.h"

namespace gpucal::calibration {
namespace {

using testing::import_text;

std::string refusal(const std::string& dir, const std::string& text, const ImportOptions& options = {}) {
  try {
    import_text(dir, text, options);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

// A 16-rank allreduce at 1 KiB: algbw 1024 B / 42 us = 0.024 prints 0.02, busbw 0.0457 prints
// 0.05; 0.05 / 0.02 = 2.5, above every bus factor, yet within the printed digits' rounding.
const char* kSmallRow =
    "        1024           256     float     sum      -1    42.00    0.02    0.05      0    42.00    0.02    0.05      0\n";

TEST(ImportFidelity, PrintedDigitsAreIntervalsSoATablePrintedByNcclTestsImports) {
  const std::string dir = testing::fresh_temp_dir();
  const std::string log = testing::nccl_preamble("all_reduce_perf", 2, 8) + testing::nccl_column_header() + kSmallRow;
  const auto runs = import_text(dir, log);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].nranks, 16);
  EXPECT_DOUBLE_EQ(runs[0].collectives[0].busbw_half_unit, 0.005);
  EXPECT_DOUBLE_EQ(half_unit_of_last_digit("80922"), 0.5);
  EXPECT_DOUBLE_EQ(half_unit_of_last_digit("1.2e+05"), 5000);
  // Beyond the rounding it is still refused: busbw 0.09 is no 16-rank allreduce of algbw 0.02.
  std::string bad = kSmallRow;
  bad.replace(bad.find("0.05"), 4, "0.09");
  const std::string why = refusal(dir, testing::nccl_preamble("all_reduce_perf", 2, 8) + testing::nccl_column_header() + bad);
  EXPECT_NE(why.find("beyond the printed digits' rounding"), std::string::npos) << why;
}

TEST(ImportFidelity, OpenMpiTagsInsideALineAreRemoved) {
  const std::string dir = testing::fresh_temp_dir();
  // Every line tagged at its start (mpirun --tag-output), the row also inside.
  std::string row = kSmallRow;
  row.insert(row.find("   42.00"), "[1,0]<stdout>:");
  std::string log;
  std::istringstream lines(testing::nccl_preamble("all_reduce_perf", 2, 8) + testing::nccl_column_header() + row);
  for (std::string line; std::getline(lines, line);) log += "[1,0]<stdout>:" + line + "\n";
  const auto runs = import_text(dir, log);
  ASSERT_EQ(runs[0].collectives.size(), 2u);
  EXPECT_DOUBLE_EQ(runs[0].collectives[0].time_us, 42.0);
}

std::string headless_table(const std::string& redop, int root, long long count_divisor, double factor,
                           const std::string& wrong_oop = "0", const std::string& wrong_ip = "0") {
  std::string rows;
  for (long long size : {1048576LL, 2097152LL, 4194304LL}) {
    testing::RowSpec r;
    r.size = size;
    r.count = size / 4 / count_divisor;
    r.redop = redop;
    r.root = root;
    r.time_oop = r.time_ip = 100.0 + static_cast<double>(size) / 20000.0;
    r.factor = factor;
    r.wrong_oop = wrong_oop;
    r.wrong_ip = wrong_ip;
    rows += testing::nccl_row(r);
  }
  return testing::nccl_column_header() + rows;
}

TEST(ImportFidelity, TheCollectiveIsDeducedFromTheTableWhenTheLogDoesNotNameIt) {
  const std::string dir = testing::fresh_temp_dir();
  ImportOptions rpn;
  rpn.ranks_per_node = 8;
  // nranks from an NCCL INFO line; redop sum, root -1, S = count x 4, busbw/algbw 1.875.
  const auto ar = import_text(
      dir, "host:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 busId 1000 - Init COMPLETE\n" +
               headless_table("sum", -1, 1, 1.875),
      rpn);
  EXPECT_EQ(ar[0].collective, "allreduce");
  EXPECT_EQ(ar[0].nranks, 16);
  EXPECT_EQ(ar[0].nranks_from, "NCCL INFO line ('nranks')");
  EXPECT_EQ(ar[0].collective_from.rfind("the table: ", 0), 0u) << ar[0].collective_from;
  // reduce_scatter: S = 16 x count x 4 gives the rank count itself.
  const auto rs = import_text(dir, headless_table("sum", -1, 16, 0.9375), rpn);
  EXPECT_EQ(rs[0].collective, "reduce_scatter");
  EXPECT_EQ(rs[0].nranks, 16);
  // broadcast: a root and no reduction.
  EXPECT_EQ(import_text(dir, headless_table("none", 0, 1, 1.0), [] {
              ImportOptions o;
              o.nranks = 4;
              o.ranks_per_node = 4;
              return o;
            }())[0].collective,
            "broadcast");
  // allgather and alltoall print alike: refused, naming both.
  const std::string why = refusal(dir, headless_table("none", -1, 8, 0.875), rpn);
  EXPECT_NE(why.find("allgather or alltoall"), std::string::npos) << why;
  EXPECT_NE(why.find("--collective"), std::string::npos) << why;
}

// At 2 ranks a sendrecv table (nccl-tests prints its unused op, "sum") reads like allreduce's:
// bus factor 1, no root, S = count x 4. The in-place #wrong column tells them apart where the
// run validated: nccl-tests checks allreduce in place, never sendrecv.
std::string two_rank_sum_table(const std::string& wrong_oop, const std::string& wrong_ip) {
  return headless_table("sum", -1, 1, 1.0, wrong_oop, wrong_ip);
}

TEST(ImportFidelity, TwoRankSumTablesAreToldApartByTheInPlaceCheck) {
  const std::string dir = testing::fresh_temp_dir();
  ImportOptions two;
  two.nranks = 2;
  two.ranks_per_node = 2;
  const auto ar = import_text(dir, two_rank_sum_table("0", "0"), two);
  EXPECT_EQ(ar[0].collective, "allreduce");
  EXPECT_NE(ar[0].collective_from.find("in-place results checked"), std::string::npos) << ar[0].collective_from;
  const auto sr = import_text(dir, two_rank_sum_table("0", "N/A"), two);
  EXPECT_EQ(sr[0].collective, "sendrecv");
  EXPECT_NE(sr[0].collective_from.find("in-place #wrong N/A"), std::string::npos) << sr[0].collective_from;
  // -c 0: every #wrong N/A, nothing tells them apart; refused, naming both.
  const std::string why = refusal(dir, two_rank_sum_table("N/A", "N/A"), two);
  EXPECT_NE(why.find("allreduce or sendrecv"), std::string::npos) << why;
  // A log that names sendrecv_perf gets no "does not look like" note for its printed "sum".
  const auto named = import_text(dir, testing::nccl_preamble("sendrecv_perf", 1, 2) + two_rank_sum_table("0", "N/A"));
  EXPECT_EQ(named[0].collective, "sendrecv");
  for (const auto& note : named[0].notes) EXPECT_EQ(note.find("does not look like"), std::string::npos) << note;
}

TEST(ImportFidelity, AnUnknownRankCountIsNamedWhenTheTableStaysAmbiguous) {
  const std::string dir = testing::fresh_temp_dir();
  // Old nccl-tests (no redop or root column), S = count x 4: allreduce, broadcast, reduce and
  // sendrecv all fit without a rank count.
  const std::string old_table =
      "#       size         count      type     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "     1048576        262144     float    100.0   10.49   10.49  0e+00    100.0   10.49   10.49  0e+00\n";
  const std::string why = refusal(dir, old_table);
  EXPECT_NE(why.find("the rank count is unknown"), std::string::npos) << why;
  EXPECT_NE(why.find("broadcast"), std::string::npos) << why;
}

std::string allreduce_rows(int nranks) {
  std::string rows;
  for (long long size : {536870912LL, 1073741824LL, 2147483648LL, 4294967296LL}) {
    testing::RowSpec r;
    r.size = size;
    r.count = size / 4;
    r.time_oop = r.time_ip = static_cast<double>(size) / 3.0e5;
    r.factor = 2.0 * (nranks - 1) / nranks;
    rows += testing::nccl_row(r);
  }
  return rows;
}

// A '# Using devices' list pasted in part (CoreWeave's GB200 logs keep only the last rank line)
// shows at least its highest rank + 1 ranks: it is not counted as the rank count, nor its hosts
// as the nodes.
TEST(ImportFidelity, ARankListShownInPartIsNoRankCount) {
  const std::string dir = testing::fresh_temp_dir();
  const std::string log =
      "#  Rank 71 Group  0 Pid  14840 on slurm-gb200-207-171 device  3 [0x01] NVIDIA GB200\n#\n" +
      testing::nccl_column_header() + allreduce_rows(72);
  const auto headless = import_text(dir, log);  // nodes unknown: hosts of a list in part are not counted
  ASSERT_EQ(headless.size(), 1u);
  EXPECT_EQ(headless[0].nranks, 72);
  EXPECT_EQ(headless[0].nnodes, 0);
  ImportOptions rpn;
  rpn.ranks_per_node = 4;
  const auto runs = import_text(dir, log, rpn);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].collective, "allreduce");
  EXPECT_EQ(runs[0].nranks, 72);
  EXPECT_EQ(runs[0].nranks_from, "busbw/algbw");
  EXPECT_EQ(runs[0].nnodes, 18);
  EXPECT_EQ(runs[0].device, "NVIDIA GB200");
  // A rank count below the highest rank shown is refused.
  ImportOptions few = rpn;
  few.nranks = 16;
  const std::string named = "# Collective test starting: all_reduce_perf\n" + log;
  EXPECT_NE(refusal(dir, named, few).find("lists rank 71"), std::string::npos) << refusal(dir, named, few);
  EXPECT_TRUE(rank_list_complete({RankLine{0}, RankLine{1}}));
  EXPECT_FALSE(rank_list_complete({RankLine{71}}));
}

// An nccl-tests program run with no launcher is one process: -t x -g ranks on one node.
TEST(ImportFidelity, AProgramRunWithoutALauncherHasThreadsTimesGpusRanks) {
  const std::string dir = testing::fresh_temp_dir();
  EXPECT_EQ(parse_launcher("./build/all_reduce_perf -b 8 -e 128M -t 2 -g 4").nranks, 8);
  EXPECT_EQ(parse_launcher("all_gather_perf -b 8 -e 128M").nranks, 1);
  EXPECT_EQ(parse_launcher("mpirun -np 16 ./build/all_reduce_perf -g 1").nranks, 16);
  std::string rows;
  for (long long size : {134217728LL, 268435456LL}) {
    testing::RowSpec r;
    r.size = size;
    r.count = size / 4;
    r.time_oop = r.time_ip = static_cast<double>(size) / 1.9e5;
    rows += testing::nccl_row(r);
  }
  const auto runs =
      import_text(dir, "./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8\n#\n" + testing::nccl_column_header() + rows);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].collective, "sendrecv");
  EXPECT_EQ(runs[0].nranks, 8);
  EXPECT_EQ(runs[0].nnodes, 1);
  EXPECT_EQ(runs[0].nranks_from, "command line");
}

TEST(ImportFidelity, FormatsComeFromTheRegistry) {
  const std::string dir = testing::fresh_temp_dir();
  const std::string why = refusal(dir, "just some text\n");
  for (const auto& f : import_formats()) EXPECT_NE(why.find(std::string(f.name)), std::string::npos) << why;
  ImportOptions wrong;
  wrong.format = "osuu";
  EXPECT_NE(refusal(dir, "x\n", wrong).find("did you mean 'osu'"), std::string::npos);
  // The CSV format: one run per (collective, nranks); an alias names its collective.
  ImportOptions rpn;
  rpn.ranks_per_node = 8;
  const auto runs = import_text(dir,
                                "collective,dtype,nranks,size_bytes,time_us,iters\nall_reduce,bf16,8,1048576,25,100\n"
                                "allgather,bf16,8,1048576,20,100\nallreduce,bf16,8,16777216,110,100\n",
                                rpn);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].format, "csv");
  EXPECT_EQ(runs[0].collective, "allreduce");
  EXPECT_EQ(runs[0].nranks, 8);
  ASSERT_EQ(runs[0].collectives.size(), 2u);
  EXPECT_EQ(runs[0].collectives[1].line, 4);
  EXPECT_EQ(runs[0].notes, std::vector<std::string>{"column 'iters' not read"});
  EXPECT_NE(refusal(dir, "size_bytes,time_us,collective\n1024,-1,allreduce\n", rpn).find(":2: column 'time_us'"),
            std::string::npos);
}

// Every collected public log, with no flags: at least 95% import, and where a log names its
// collective the table's own evidence agrees.
TEST(ImportFidelity, TheCollectedLogsImportWithNoFlags) {
  const std::filesystem::path dir = std::filesystem::path(testing::comm_log("x")).parent_path();
  int logs = 0, imported = 0;
  std::string refused;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".log") continue;
    ++logs;
    try {
      for (const auto& run : import_log(entry.path().string(), {})) {
        if (run.format == "osu" || run.collective_from.rfind("the table", 0) == 0) continue;
        EXPECT_NE(std::find(run.table_candidates.begin(), run.table_candidates.end(), run.collective),
                  run.table_candidates.end())
            << entry.path().filename() << ": the log says " << run.collective << ", its table does not fit it";
      }
      ++imported;
    } catch (const ImportError& e) {
      refused += std::string("\n  ") + e.what();
    }
  }
  std::cout << imported << " of " << logs << " collected logs import with no flags; refused:" << refused << "\n";
  EXPECT_GE(logs, 30);
  EXPECT_GE(imported * 100, logs * 95) << "refused:" << refused;
}

}  // namespace
}  // namespace gpucal::calibration
