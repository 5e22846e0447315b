// NCCL's TUNING lines (as NCCL 2.20-2.28 and RCCL write them) back into choices: the
// parser, the per-point summary, NCCL_DEBUG_FILE expansion, and the tail reader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/world/nccl_log.h"

using namespace gpucal;

namespace {

NcclTuningRecord rec(const std::string& func, int64_t bytes, const std::string& algo, const std::string& proto,
                     bool numbered = false) {
  return NcclTuningRecord{func, bytes, algo, proto, -1, -1, numbered};
}

void append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

}  // namespace

TEST(NcclLog, ParsesTheNamedFormOfNccl224AndLater) {
  const auto r = parse_nccl_tuning_line(
      "gpu-node-7:123456:123470 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->func, "AllReduce");
  EXPECT_EQ(r->bytes, 4096);
  EXPECT_EQ(r->algo, "RING");
  EXPECT_EQ(r->proto, "LL");
  EXPECT_EQ(r->channel_lo, 0);
  EXPECT_EQ(r->channel_hi, 1);
  EXPECT_FALSE(r->numbered);
}

TEST(NcclLog, TimestampPrefixAndLongNamesParse) {
  // NCCL_DEBUG_TIMESTAMP_LEVELS=INFO puts "[%F %T] " (or a custom format) before the host.
  const auto r = parse_nccl_tuning_line(
      "[2025-03-01 10:00:00.123456] gpu-node-7.cluster:99:101 [3] NCCL INFO ReduceScatter: 1048576 Bytes -> Algo "
      "COLLNET_DIRECT proto SIMPLE channel{Lo..Hi}={8..31}\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->func, "ReduceScatter");
  EXPECT_EQ(r->bytes, 1048576);
  EXPECT_EQ(r->algo, "COLLNET_DIRECT");
  EXPECT_EQ(r->proto, "SIMPLE");
  EXPECT_EQ(r->channel_lo, 8);
  EXPECT_EQ(r->channel_hi, 31);
}

TEST(NcclLog, NumberedFormsMapToNames) {
  // NCCL 2.20-2.22 (and RCCL built on them): no function name, numbers, a time.
  auto r = parse_nccl_tuning_line("host:4242:4242 [0] NCCL INFO 16777216 Bytes -> Algo 0 proto 2 time 123.456001");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->func, "");
  EXPECT_EQ(r->bytes, 16777216);
  EXPECT_EQ(r->algo, "TREE");
  EXPECT_EQ(r->proto, "SIMPLE");
  EXPECT_EQ(r->channel_lo, -1);
  EXPECT_TRUE(r->numbered);
  // NCCL 2.23: the function name with numbers.
  r = parse_nccl_tuning_line("host:1:2 [1] NCCL INFO AllGather: 8388608 Bytes -> Algo 6 proto 1 time 40.000000");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->func, "AllGather");
  EXPECT_EQ(r->algo, "PAT");
  EXPECT_EQ(r->proto, "LL128");
  EXPECT_TRUE(r->numbered);
  const std::vector<std::string> algos = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  for (size_t i = 0; i < algos.size(); ++i) {
    r = parse_nccl_tuning_line("NCCL INFO 8 Bytes -> Algo " + std::to_string(i) + " proto 0 time 1.0");
    ASSERT_TRUE(r) << i;
    EXPECT_EQ(r->algo, algos[i]);
    EXPECT_EQ(r->proto, "LL");
  }
  r = parse_nccl_tuning_line("NCCL INFO 8 Bytes -> Algo 9 proto 0 time 1.0");  // past the table: kept as written
  ASSERT_TRUE(r);
  EXPECT_EQ(r->algo, "9");
}

TEST(NcclLog, OtherLinesAndMalformedOnesAreIgnored) {
  const std::string valid_allreduce =
      "gpu-node-7:123456:123470 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}";
  const std::string valid_broadcast =
      "gpu-node-7:123456:123470 [0] NCCL INFO Broadcast: 64 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}";
  const std::vector<std::string> lines = {
      "gpu-node-7:123456:123456 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.7<0>",
      "gpu-node-7:123456:123456 [0] NCCL INFO Channel 00/32 : 0 1 2 3",
      "gpu-node-7:123456:123456 [0] NCCL INFO   Algorithm   |            Tree |            Ring |",
      valid_allreduce,
      "gpu-node-7:123456:123456 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
      // symmetric kernels (registered windows) log a kernel, not an algorithm
      "gpu-node-7:123456:123470 [0] NCCL INFO AllReduce [Symmetric]: 1024 Bytes -> Kernel AllReduce_AGxLL_R nchannels 8 "
      "nthreads 512 nWorks 1",
      // TRACE builds print the cost model's pick too; only the INFO line counts
      "gpu-node-7:123456:123470 [0] 12.5 enqueue.cc:1863 NCCL TRACE 4096 Bytes -> Algo 1 proto 0 time 3.000000",
      "gpu-node-7:123456:123470 [0] enqueue.cc:1859 NCCL WARN Error : no algorithm/protocol available",
      "NCCL INFO AllReduce: 40x6 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}",
      "NCCL INFO AllReduce: -4096 Bytes -> Algo RING proto LL",
      "NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto",
      "NCCL INFO AllReduce: 4096 Bytes -> Algo RING protoLL",
      "NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL!",
      "NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..}",
      "NCCL INFO 4096 Bytes -> Algo 1 proto LL time 3.0",  // numbers and names mixed
      "NCCL INFO All Reduce: 4096 Bytes -> Algo RING proto LL",
      "",
      valid_broadcast,
  };
  for (const auto& line : lines)
    EXPECT_EQ(parse_nccl_tuning_line(line).has_value(), line == valid_allreduce || line == valid_broadcast) << line;
  const auto records = parse_nccl_tuning_lines(lines);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].func, "AllReduce");
  EXPECT_EQ(records[1].func, "Broadcast");
  EXPECT_EQ(records[1].bytes, 64);
}

TEST(NcclLog, SummaryTakesTheMostFrequentChoiceAndListsTheMix) {
  std::vector<NcclTuningRecord> records;
  records.push_back(rec("AllReduce", 4096, "TREE", "LL"));  // seen first, but rarer
  for (int i = 0; i < 40; ++i) records.push_back(rec("AllReduce", 4096, "RING", "LL128"));
  records.push_back(rec("AllReduce", 4096, "TREE", "LL"));
  const NcclTuningSummary s = summarize_nccl_tuning(records, {"AllReduce", 4096, 4096});
  EXPECT_EQ(s.algo, "RING");
  EXPECT_EQ(s.proto, "LL128");
  EXPECT_EQ(s.choices, "RING/LL128:40,TREE/LL:2");
  EXPECT_EQ(s.matched, 42);
}

TEST(NcclLog, SummaryOfOneChoiceCountsIt) {
  const NcclTuningSummary s =
      summarize_nccl_tuning({rec("Broadcast", 64, "RING", "LL"), rec("Broadcast", 64, "RING", "LL")}, {"Broadcast", 64, 64});
  EXPECT_EQ(s.algo, "RING");
  EXPECT_EQ(s.proto, "LL");
  EXPECT_EQ(s.choices, "RING/LL:2");
}

TEST(NcclLog, SummaryTiesGoToTheChoiceSeenFirst) {
  const NcclTuningSummary s = summarize_nccl_tuning(
      {rec("AllReduce", 8, "NVLS", "SIMPLE"), rec("AllReduce", 8, "RING", "LL"), rec("AllReduce", 8, "RING", "LL"),
       rec("AllReduce", 8, "NVLS", "SIMPLE")},
      {"AllReduce", 8, 8});
  EXPECT_EQ(s.algo, "NVLS");
  EXPECT_EQ(s.proto, "SIMPLE");
  EXPECT_EQ(s.choices, "NVLS/SIMPLE:2,RING/LL:2");
}

TEST(NcclLog, SummaryKeepsOnlyThePointsFunctionAndBytes) {
  // An allgather at 4 ranks of 1024 B per rank: the named form logs the API count (1024 B),
  // the numbered forms the whole buffer (4096 B).
  const NcclTuningExpect expect{"AllGather", 1024, 4096};
  std::vector<NcclTuningRecord> records = {
      rec("AllGather", 1024, "RING", "LL"),
      rec("AllReduce", 1024, "TREE", "LL"),     // another function
      rec("AllGather", 2048, "TREE", "SIMPLE"),  // another size
      rec("AllGather", 4096, "NVLS", "SIMPLE"),  // named form with the whole buffer: not this point
  };
  NcclTuningSummary s = summarize_nccl_tuning(records, expect);
  EXPECT_EQ(s.choices, "RING/LL:1");
  EXPECT_EQ(s.matched, 1);

  records = {
      rec("", 4096, "RING", "LL128", true),           // 2.20-2.22: no name, whole buffer
      rec("AllGather", 4096, "RING", "LL128", true),  // 2.23
      rec("", 1024, "TREE", "LL", true),              // numbered with the per-rank count: another point
      rec("ReduceScatter", 4096, "TREE", "LL", true),
  };
  s = summarize_nccl_tuning(records, expect);
  EXPECT_EQ(s.algo, "RING");
  EXPECT_EQ(s.proto, "LL128");
  EXPECT_EQ(s.choices, "RING/LL128:2");
}

TEST(NcclLog, SummaryOfNothingIsEmpty) {
  NcclTuningSummary s = summarize_nccl_tuning({rec("AllReduce", 8, "RING", "LL")}, {"AllReduce", 16, 16});
  EXPECT_EQ(s.matched, 0);
  EXPECT_EQ(s.algo, "");
  EXPECT_EQ(s.proto, "");
  EXPECT_EQ(s.choices, "");
  // No function name (point-to-point): even a nameless record of the same size does not match.
  s = summarize_nccl_tuning({rec("", 8, "RING", "LL", true)}, {"", 8, 8});
  EXPECT_EQ(s.matched, 0);
}

TEST(NcclLog, DebugFileExpandsLikeNccl) {
  EXPECT_EQ(expand_nccl_debug_file("/r/run.nccl.%h.%p.log", "gpu7", 4242), "/r/run.nccl.gpu7.4242.log");
  EXPECT_EQ(expand_nccl_debug_file("a%%h%x%", "h", 1), "a%h%x%");
  EXPECT_EQ(expand_nccl_debug_file("plain.log", "h", 1), "plain.log");
  const std::string host = nccl_host_name();
  EXPECT_FALSE(host.empty());
  EXPECT_EQ(host.find('.'), std::string::npos);
  EXPECT_EQ(nccl_debug_file("x.%h.%p"), "x." + host + "." + std::to_string(getpid()));
}

TEST(NcclLog, TailReturnsOnlyCompleteLinesAppendedSinceTheLastCall) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("gpucal_nccl_tail_" + std::to_string(getpid()) + ".log")).string();
  std::remove(path.c_str());
  LogTail tail(path);
  EXPECT_EQ(tail.path(), path);
  EXPECT_TRUE(tail.read_new().empty());  // not created yet

  append(path, "first\nsecond\npart");
  EXPECT_EQ(tail.read_new(), (std::vector<std::string>{"first", "second"}));
  EXPECT_TRUE(tail.read_new().empty());  // the partial line waits
  append(path, "ial");
  EXPECT_TRUE(tail.read_new().empty());
  append(path, " line\n\nthird\n");
  EXPECT_EQ(tail.read_new(), (std::vector<std::string>{"partial line", "", "third"}));
  EXPECT_TRUE(tail.read_new().empty());

  // Lines as NCCL writes them between two calls come back parsed.
  append(path,
         "h:1:2 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n"
         "h:1:2 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}\n");
  const auto records = parse_nccl_tuning_lines(tail.read_new());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].algo, "TREE");

  {  // rewritten shorter (NCCL opens its file with "w"): read from the start again
    std::ofstream out(path, std::ios::trunc);
    out << "new\n";
  }
  EXPECT_EQ(tail.read_new(), (std::vector<std::string>{"new"}));
  std::remove(path.c_str());
  EXPECT_TRUE(tail.read_new().empty());
}
