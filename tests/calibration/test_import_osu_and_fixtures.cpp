// gpucal import: OSU Micro-Benchmarks output, the collected public logs of 12+ systems
// (tests/fixtures/comm_logs, each naming its source), and the results folder the importer writes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "app/common/csv_table.h"
#include "tests/calibration/import_test_util.h"
#include "app/import/import_text.h"
#include "app/import/import_writer.h"
#include "app/common/results_dir.h"
#include "app/common/calibration_json.h"
#include "app/fit/calibration_build.h"
#include "app/fit/comm_model.h"

namespace gpucal::calibration {
namespace {

namespace fs = std::filesystem;
using testing::import_text;

std::string fixture(const std::string& name) { return testing::comm_log(name); }

struct FixtureCase {
  std::string name;
  ImportOptions options;
  std::string format, collective_or_pattern, device;
  int nranks, nnodes, rows;
};

ImportOptions flags(const std::string& collective, int rpn = 0, const std::string& device = "") {
  ImportOptions o;
  o.collective = collective;
  if (rpn > 0) o.ranks_per_node = rpn;
  o.device = device;
  return o;
}

TEST(ImportFixtures, EveryCollectedLogImportsWithItsRanksNodesAndDevice) {
  const std::vector<FixtureCase> cases = {
      {"nccl_gh200_alps_slingshot_2x4", {}, "nccl-tests", "allreduce", "NVIDIA GH200 120GB", 8, 2, 50},
      {"nccl_h100_aws_p5_efa_2x8", flags("allreduce", 8), "nccl-tests", "allreduce", "", 16, 2, 64},
      {"nccl_h100_gcp_a3mega_tcpxo_2x8", {}, "nccl-tests", "allreduce", "NVIDIA H100 80GB HBM3", 16, 2, 62},
      {"nccl_h100_hgx_ib_2x8", {}, "nccl-tests", "allreduce", "NVIDIA H100 80GB HBM3", 16, 2, 64},
      {"nccl_h100_vm_ib_4x8", {}, "nccl-tests", "allreduce", "NVIDIA H100 80GB HBM3", 32, 4, 64},
      {"nccl_h200_tcp_2x8", {}, "nccl-tests", "allreduce", "NVIDIA H200", 16, 2, 64},
      {"nccl_l40s_roce_2x2", {}, "nccl-tests", "allreduce", "NVIDIA L40S", 4, 2, 62},
      {"nccl_l40s_tcp_2x1", {}, "nccl-tests", "allreduce", "NVIDIA L40S", 2, 2, 62},
      {"nccl_t4_aws_g4dn_efa_2x1", flags("allreduce"), "nccl-tests", "allreduce", "Tesla T4", 2, 2, 58},
      {"rccl_mi300x_aac10_roce_2x8", {}, "rccl-tests", "allreduce", "AMD Instinct MI300X", 16, 2, 64},
      {"rccl_mi300x_aac8_xgmi_1x8", {}, "rccl-tests", "allreduce", "AMD Instinct MI300X", 8, 1, 62},
      {"rccl_mi355x_aac14_pollara_2x8", flags("allreduce", 0, "AMD Instinct MI355X"), "rccl-tests",
       "allreduce", "AMD Instinct MI355X", 16, 2, 62},
      {"osu_alltoall_alps_slingshot_mpich_2x4", {}, "osu", "alltoall", "", 8, 2, 21},
      {"osu_bibw_alps_slingshot_ompi", {}, "osu", "bidir", "", 2, 2, 23},
      {"osu_bw_alps_slingshot_ompi", {}, "osu", "sendrecv", "", 2, 2, 23},
      {"osu_bw_dd_alps_intranode_ompi", {}, "osu", "sendrecv", "", 2, 1, 23},
      {"osu_latency_alps_slingshot_mpich", {}, "osu", "pingpong", "", 2, 2, 23},
      {"osu_latency_dd_alps_slingshot_mpich", {}, "osu", "pingpong", "", 2, 2, 23}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto runs = import_log(fixture(c.name), c.options);
    ASSERT_EQ(runs.size(), 1u);
    const ImportedRun& r = runs[0];
    EXPECT_EQ(r.format, c.format);
    EXPECT_EQ(r.collective.empty() ? r.p2p_pattern : r.collective, c.collective_or_pattern);
    EXPECT_EQ(r.device, c.device);
    EXPECT_EQ(r.nranks, c.nranks);
    EXPECT_EQ(r.nnodes, c.nnodes);
    EXPECT_EQ(static_cast<int>(r.collectives.size() + r.p2p.size()), c.rows);
  }
}

TEST(ImportFixtures, TablesSeparatedOnlyByShellPromptsEachTakeTheirOwnCommandLine) {
  // Three binaries pasted one after the other, each after its shell prompt, without the
  // '# Collective test starting' line of nccl-tests 2.17+: each table's collective comes from
  // the prompt between it and the previous table. all_gather's first two rows are zero bytes.
  const auto runs = import_log(fixture("nccl_rtx2080ti_pcie_1x2"), {});
  ASSERT_EQ(runs.size(), 3u);
  const std::vector<std::string> collectives{"allreduce", "allgather", "broadcast"};
  const std::vector<std::size_t> rows{56, 52, 56};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE(collectives[i]);
    EXPECT_EQ(runs[i].collective, collectives[i]);
    EXPECT_EQ(runs[i].device, "NVIDIA GeForce RTX 2080 Ti");
    EXPECT_EQ(runs[i].nranks, 2);
    EXPECT_EQ(runs[i].nnodes, 1);
    EXPECT_EQ(runs[i].collectives.size(), rows[i]);
    EXPECT_NE(runs[i].command_line.find("./build/"), std::string::npos) << runs[i].command_line;
    EXPECT_EQ(runs[i].command_line.find("root@"), std::string::npos) << runs[i].command_line;
  }
  EXPECT_EQ(runs[1].program, "all_gather_perf");
  EXPECT_DOUBLE_EQ(runs[1].collectives.front().size_bytes, 32);  // the zero-byte rows are skipped
  EXPECT_EQ(runs[2].collectives.front().root, 0);
}

// One log holding an OSU table and then an nccl-tests table (two tools' output pasted into one
// file): each table is read by its own reader, with its own command line.
TEST(ImportFixtures, TablesOfTwoToolsInOneLogAreReadApart) {
  const std::string dir = testing::fresh_temp_dir();
  const std::string mixed = testing::read_text(fixture("osu_bw_alps_slingshot_ompi")) + "\n" +
                            testing::read_text(fixture("nccl_l40s_tcp_2x1"));
  const auto runs = import_log(testing::write_file(dir, "mixed.log", mixed), {});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].format, "osu");
  EXPECT_EQ(runs[0].p2p_pattern, "sendrecv");
  EXPECT_EQ(runs[0].p2p.size(), import_log(fixture("osu_bw_alps_slingshot_ompi"), {})[0].p2p.size());
  for (const auto& p : runs[0].p2p) EXPECT_LE(p.size_bytes, 4194304) << "an nccl-tests row read as OSU's";
  EXPECT_EQ(runs[1].format, "nccl-tests");
  EXPECT_EQ(runs[1].collective, "allreduce");
  EXPECT_EQ(runs[1].device, "NVIDIA L40S");
  EXPECT_EQ(runs[1].collectives.size(), import_log(fixture("nccl_l40s_tcp_2x1"), {})[0].collectives.size());
  EXPECT_NE(runs[1].command_line.find("all_reduce_perf"), std::string::npos) << runs[1].command_line;
  EXPECT_EQ(runs[0].command_line.find("all_reduce_perf"), std::string::npos) << runs[0].command_line;
}

// A number that is no rank label ("99999999999: ...") or no launcher count (ppr:99999999999)
// is text of the log: the import goes on without it.
TEST(ImportFixtures, NumbersThatAreNoLabelOrCountAreText) {
  const std::string dir = testing::fresh_temp_dir();
  const std::string log = testing::read_text(fixture("nccl_l40s_tcp_2x1"));
  const auto runs = import_log(testing::write_file(dir, "a.log", "99999999999: a line of the job's own\n" + log), {});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].nranks, 2);
  const LauncherCounts c = parse_launcher("mpirun --map-by ppr:99999999999:node -np 99999999999 ./all_reduce_perf");
  EXPECT_FALSE(c.ranks_per_node.has_value());
  EXPECT_FALSE(c.nranks.has_value());
  EXPECT_EQ(parse_launcher("mpirun -H a:16777216,b:16777216 ./x").nranks, std::nullopt);  // 2^25 ranks: no count
}

TEST(ImportFixtures, FixturesWithoutTheFactsImportWhatTheyGiveAndTheConsumerNamesTheFlag) {
  // No *_perf command line: the collective comes from the table (redop sum, root -1, S = count x 4).
  const auto t4 = import_log(fixture("nccl_t4_aws_g4dn_efa_2x1"), {});
  EXPECT_EQ(t4[0].collective, "allreduce");
  EXPECT_EQ(t4[0].collective_from.rfind("the table: ", 0), 0u) << t4[0].collective_from;
  // No host names and no launcher counts: 16 ranks from busbw/algbw, the nodes unknown.
  const auto p5 = import_log(fixture("nccl_h100_aws_p5_efa_2x8"), {});
  ASSERT_EQ(p5.size(), 1u);
  EXPECT_EQ(p5[0].nranks, 16);
  EXPECT_EQ(p5[0].nnodes, 0);
  EXPECT_EQ(p5[0].nodes_from, "unknown");
  const std::string dir = testing::fresh_temp_dir();
  write_imported_results(p5, dir + "/out", {"gpucal", "import"});
  const CsvTable t = CsvTable::read_file(dir + "/out/collectives.csv");
  ASSERT_EQ(t.row_count(), 64u);
  for (const char* column : {"nnodes", "ranks_per_node", "spans_nodes"})
    EXPECT_FALSE(t.get_optional_double(0, column).has_value()) << column << " is not in the log";
  // The fit keeps the group, in no tier; a tier's prediction refuses it, naming the flag.
  const nlohmann::json calibration = build_calibration(load_results_dir(dir + "/out"));
  const auto& groups = calibration["communication"]["collectives"];
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0]["spans_nodes"], -1);
  EXPECT_EQ(groups[0]["nnodes"], 0);
  EXPECT_EQ(groups[0]["nranks"], 16);
  // Written and read back, the group passes calibration.json's schema (nnodes and ranks_per_node
  // 0 with spans_nodes -1), so predict, predict-comm and export reach the refusal that names the flag.
  write_json_file(calibration, dir + "/out/calibration.json");
  EXPECT_EQ(read_calibration_file(dir + "/out/calibration.json")["communication"]["collectives"][0]["spans_nodes"], -1);
  const CommModel model(read_calibration_file(dir + "/out/calibration.json"));
  for (int64_t nnodes : {1, 2}) {
    try {
      model.predict({.collective = "allreduce", .nranks = 16, .nnodes = nnodes, .size_bytes = 1 << 20});
      ADD_FAILURE() << "a group of unknown nodes predicted a tier (nnodes " << nnodes << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--ranks-per-node N"), std::string::npos) << e.what();
    }
  }
  // With the flag the same log is in the inter-node tier.
  ImportOptions rpn;
  rpn.ranks_per_node = 8;
  write_imported_results(import_log(fixture("nccl_h100_aws_p5_efa_2x8"), rpn), dir + "/rpn", {"gpucal", "import"});
  const CommModel tiered(build_calibration(load_results_dir(dir + "/rpn")));
  EXPECT_GT(tiered.predict({.collective = "allreduce", .nranks = 16, .nnodes = 2, .size_bytes = 1 << 20}).time_s, 0);
}

// A file's own '# source:' comment (with its '#   ' continuation lines) is its source_ref unless
// --source-ref gives one: every row of a collected log or table names where it came from.
TEST(ImportFixtures, EachFileNamesItsSourceFromItsHeader) {
  const auto hgx = import_log(fixture("nccl_h100_hgx_ib_2x8"), {});
  EXPECT_EQ(hgx[0].source_ref, "https://github.com/NVIDIA/nccl-tests/issues/309 (issue description by qoofyk, 2025-05)");
  const auto xla = import_log(testing::beside_test_binary(GPUCAL_XLA_FIXTURES_RELATIVE) + "/xla_matmul_sm90.txtpb", {});
  EXPECT_NE(xla[0].source_ref.find("default_matmul_perf_table.txtpb at commit dc660322168302831d1cbc4c99683cd79671286e"),
            std::string::npos)
      << xla[0].source_ref;
  ImportOptions given;
  given.source_ref = "a paper, table 3";
  EXPECT_EQ(import_log(fixture("nccl_h100_hgx_ib_2x8"), given)[0].source_ref, "a paper, table 3");
  const std::string dir = testing::fresh_temp_dir();
  const std::string log = testing::read_text(fixture("nccl_l40s_tcp_2x1"));
  const std::string bare = testing::write_file(dir, "bare.log", log.substr(log.find("# nThread")));
  EXPECT_EQ(import_log(bare, {})[0].source_ref, "");  // no header of its own: no source
}

TEST(ImportOsu, LatencyBandwidthAndBidirectionalBecomeP2pTransfers) {
  const auto lat = import_log(fixture("osu_latency_alps_slingshot_mpich"), {});
  ASSERT_EQ(lat[0].p2p.size(), 23u);
  EXPECT_EQ(lat[0].tool_version, "OSU 7.5");
  EXPECT_EQ(lat[0].memory, "host");
  EXPECT_DOUBLE_EQ(*lat[0].p2p[0].latency_us, 3.19);
  EXPECT_DOUBLE_EQ(lat[0].p2p[0].time_us, 2 * 3.19);  // a round trip
  const auto dd = import_log(fixture("osu_latency_dd_alps_slingshot_mpich"), {});
  EXPECT_EQ(dd[0].memory, "device");
  EXPECT_EQ(dd[0].backend, "cuda");
  const auto bw = import_log(fixture("osu_bw_alps_slingshot_ompi"), {});
  EXPECT_NEAR(bw[0].p2p.back().bandwidth_gbps, 24.00574, 1e-9);  // 24005.74 MB/s
  EXPECT_NEAR(bw[0].p2p.back().time_us, 4194304 / 24005.74, 1e-9);
  const auto bibw = import_log(fixture("osu_bibw_alps_slingshot_ompi"), {});
  EXPECT_NEAR(bibw[0].p2p.back().time_us, 2 * 4194304 / 46506.47, 1e-9);
}

TEST(ImportOsu, CollectivesWithFullStatisticsAndSizeConventions) {
  const std::string dir = testing::fresh_temp_dir();
  // osu_allreduce -f (OSU 7.4: average, minimum and maximum over ranks, iterations).
  const std::string allreduce =
      "mpirun -np 4 ./osu_allreduce -f\n\n# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_FLOAT.\n"
      "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
      "4                       2.10              1.90              2.40        1000\n"
      "8                       2.20              2.00              2.50        1000\n"
      "16                      2.30              2.10              2.60        1000\n";
  ImportOptions rpn2;
  rpn2.ranks_per_node = 2;
  const auto runs = import_text(dir, allreduce, rpn2, "allreduce.txt");
  ASSERT_EQ(runs.size(), 1u);
  const ImportedRun& r = runs[0];
  EXPECT_EQ(r.collective, "allreduce");
  EXPECT_EQ(r.nranks, 4);
  EXPECT_EQ(r.nranks_from, "command line");
  EXPECT_EQ(r.nnodes, 2);
  ASSERT_EQ(r.collectives.size(), 3u);
  EXPECT_EQ(r.collectives[0].dtype, "fp32");
  EXPECT_DOUBLE_EQ(r.collectives[0].size_bytes, 4);
  EXPECT_DOUBLE_EQ(*r.collectives[0].rank_min_us, 1.90);
  EXPECT_DOUBLE_EQ(*r.collectives[0].rank_max_us, 2.40);
  EXPECT_EQ(r.collectives[0].iterations, 1000);

  // osu_allgather: OSU's Size is per rank, nccl-tests' S the total over ranks.
  const std::string allgather =
      "srun -N 2 --ntasks-per-node 4 ./osu_allgather\n# OSU MPI Allgather Latency Test v7.5\n# Datatype: "
      "MPI_CHAR.\n"
      "# Size       Avg Latency(us)\n1024                   10.00\n2048                   12.00\n4096   "
      "15.00\n";
  const auto ag = import_text(dir, allgather, {}, "allgather.txt");
  EXPECT_EQ(ag[0].nranks, 8);
  EXPECT_DOUBLE_EQ(ag[0].collectives[0].size_bytes, 8 * 1024);
  // osu_bcast: rooted at 0; osu_reduce_scatter: Size is already the total.
  const auto bc = import_text(
      dir,
      "# OSU MPI Broadcast Latency Test v7.5\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n"
      "1 3.00\n2 3.10\n4 3.20\n",
      [] {
        ImportOptions o;
        o.nranks = 4;
        o.ranks_per_node = 4;
        return o;
      }(),
      "bcast.txt");
  EXPECT_EQ(bc[0].collective, "broadcast");
  EXPECT_EQ(bc[0].collectives[0].root, 0);
  EXPECT_EQ(bc[0].nnodes, 1);
  // A non-blocking variant is refused, naming the line of its title.
  try {
    import_text(dir, "\n# OSU MPI Non-blocking Allreduce Latency Test v7.5\n# Size  Overall(us)\n", rpn2,
                "nb.txt");
    FAIL() << "non-blocking collectives are not imported";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find("nb.txt:2:"), std::string::npos) << e.what();
  }
}

TEST(ImportOsu, OlderHeadersValidationTailLatencyAndDeviceBuffers) {
  const std::string dir = testing::fresh_temp_dir();
  // OSU 7.4 point-to-point: "Latency (us)", -c Validation, tail-latency columns, the buffer line.
  const std::string latency =
      "srun -N 2 -n 2 ./osu_latency -c -d cuda D D\n# OSU MPI-CUDA Latency Test v7.4\n"
      "# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)\n"
      "# Size      Latency (us)          Validation    P50 Tail Lat(us)    P90 Tail Lat(us)\n"
      "1                  20.00                Pass               19.50               21.00\n"
      "2                  20.10                Fail               19.60               21.10\n"
      "4                  20.20                Pass               19.70               21.20\n";
  const auto runs = import_text(dir, latency, {}, "lat.txt");
  ASSERT_EQ(runs[0].p2p.size(), 3u);
  EXPECT_EQ(runs[0].memory, "device");
  EXPECT_EQ(runs[0].nnodes, 2);
  EXPECT_DOUBLE_EQ(*runs[0].p2p[0].p50_us, 2 * 19.50);  // a round trip
  EXPECT_FALSE(*runs[0].p2p[1].validation_passed);
  write_imported_results(runs, dir + "/out", {});
  const CsvTable t = CsvTable::read_file(dir + "/out/p2p.csv");
  EXPECT_EQ(t.get_string(0, "status"), "ok");
  EXPECT_EQ(t.get_string(0, "verified"), "ok");
  EXPECT_DOUBLE_EQ(t.get_double(0, "time_us_median"), 39.0);  // the P50 round trip
  EXPECT_DOUBLE_EQ(t.get_double(0, "latency_us"), 19.5);
  EXPECT_EQ(t.get_string(1, "status"), "error");
  EXPECT_EQ(t.get_string(1, "verified"), "fail");
  // osu_reduce_scatter: OSU's Size is the total already.
  ImportOptions o;
  o.nranks = 8;
  o.ranks_per_node = 4;
  const auto rs = import_text(dir,
                              "# OSU MPI Reduce_scatter Latency Test v7.5\n# Datatype: MPI_FLOAT.\n"
                              "# Size       Avg Latency(us)\n1024 10.0\n2048 11.0\n4096 13.0\n",
                              o, "rs.txt");
  EXPECT_EQ(rs[0].collective, "reduce_scatter");
  EXPECT_EQ(rs[0].collectives[0].op, "sum");
  EXPECT_DOUBLE_EQ(rs[0].collectives[2].size_bytes, 4096);
  EXPECT_EQ(rs[0].nnodes, 2);
}

TEST(ImportOsu, FullStatisticsOnEveryCollectiveRocmBuffersAndBadRows) {
  const std::string dir = testing::fresh_temp_dir();
  ImportOptions rpn4;
  rpn4.ranks_per_node = 4;
  // -f on osu_bcast and osu_alltoall (7.x: the P50/P90/P99 tail columns after Iterations), ROCm
  // device buffers from the title and -d rocm.
  const std::string full =
      "srun -N 2 --ntasks-per-node 4 ./osu_bcast -f -d rocm\n# OSU MPI-ROCm Broadcast Latency Test v7.5\n"
      "# Datatype: MPI_CHAR.\n"
      "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations  P50 Tail Lat(us)  "
      "P90 Tail Lat(us)  P99 Tail Lat(us)\n"
      "1                       4.00              3.50              4.50        1000     3.90     4.40     4.60\n"
      "2                       4.10              3.60              4.60        1000     4.00     4.50     4.70\n"
      "\nsrun -N 2 --ntasks-per-node 4 ./osu_alltoall -f\n# OSU MPI All-to-All Personalized Exchange Latency "
      "Test v7.5\n# Datatype: MPI_CHAR.\n"
      "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
      "1                      10.00              9.00             11.00        1000\n"
      "2                      10.50              9.50             11.50        1000\n";
  const auto runs = import_text(dir, full, rpn4, "full.txt");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].collective, "broadcast");
  EXPECT_EQ(runs[0].backend, "hip");
  EXPECT_EQ(runs[0].memory, "device");
  EXPECT_EQ(runs[0].nranks, 8);
  EXPECT_EQ(runs[0].nnodes, 2);
  EXPECT_DOUBLE_EQ(*runs[0].collectives[1].rank_max_us, 4.60);
  EXPECT_DOUBLE_EQ(*runs[0].collectives[1].p50_us, 4.00);
  EXPECT_EQ(runs[0].collectives[1].iterations, 1000);
  EXPECT_EQ(runs[1].collective, "alltoall");
  EXPECT_EQ(runs[1].backend, "host");
  EXPECT_DOUBLE_EQ(runs[1].collectives[1].size_bytes, 2 * 8);  // per-rank Size x 8 ranks
  EXPECT_DOUBLE_EQ(*runs[1].collectives[0].rank_min_us, 9.00);

  // A row cut short by the end of the log is dropped with a note; mid-file it is an error naming
  // the line, as is a value that is not a number.
  const std::string header =
      "mpirun -np 2 ./osu_bw\n# OSU MPI Bandwidth Test v7.5\n# Datatype: MPI_CHAR.\n# Size      Bandwidth (MB/s)\n";
  ImportOptions rpn1;
  rpn1.ranks_per_node = 1;
  const auto cut = import_text(dir, header + "1 1.50\n2 3.00\n4\n", rpn1, "cut.txt");
  ASSERT_EQ(cut[0].p2p.size(), 2u);
  EXPECT_NE(cut[0].notes.back().find("ends mid-row"), std::string::npos);
  for (const auto& [body, line] : std::vector<std::pair<std::string, std::string>>{
           {"1 1.50\n2\n4 6.00\n", "cut.txt:6:"}, {"1 1.50\n2 fast\n", "cut.txt:6:"}, {"1 -1.5\n", "cut.txt:5:"}}) {
    try {
      import_text(dir, header + body, rpn1, "cut.txt");
      ADD_FAILURE() << body;
    } catch (const ImportError& e) {
      EXPECT_NE(std::string(e.what()).find(line), std::string::npos) << e.what();
    }
  }
}

TEST(ImportWriter, WritesCsvsInGpucalsSchemaAndSidecarsNamingTheSources) {
  const std::string dir = testing::fresh_temp_dir();
  std::vector<ImportedRun> runs = import_log(fixture("nccl_h100_hgx_ib_2x8"), {});
  for (auto& r : import_log(fixture("osu_latency_alps_slingshot_mpich"), {})) runs.push_back(r);
  const ImportSummary s = write_imported_results(runs, dir + "/out", {"gpucal", "import"});
  EXPECT_EQ(s.collective_rows, 64);
  EXPECT_EQ(s.p2p_rows, 23);
  const ResultsDir results = load_results_dir(dir + "/out");
  const CsvTable& c = results.find("collectives")->table;
  EXPECT_EQ(c.get_string(0, "impl"), "nccl-tests");
  EXPECT_EQ(c.get_string(0, "point"), "collectives/nccl-tests/allreduce/fp32/sum/n16/oop/8");
  EXPECT_EQ(c.get_int(0, "nnodes"), 2);
  EXPECT_EQ(c.get_int(0, "ranks_per_node"), 8);
  EXPECT_DOUBLE_EQ(c.get_double(0, "time_us_median"), 68.52);
  EXPECT_DOUBLE_EQ(c.get_double(0, "bus_factor"), 1.875);
  EXPECT_EQ(c.get_int(0, "launches_per_sample"), 20);
  const std::size_t last = c.row_count() - 1;
  EXPECT_NEAR(c.get_double(last, "busbw_gbps"), 469.10, 0.01);  // 17179869184 B in 68668 us, x 1.875
  EXPECT_EQ(results.find("collectives")->ok_rows.size(), 64u);
  const nlohmann::json& sidecar = results.find("collectives")->sidecar;
  EXPECT_TRUE(sidecar["imported"].get<bool>());
  EXPECT_NE(sidecar["sources"][0]["file"].get<std::string>().find("nccl_h100_hgx_ib_2x8.log"),
            std::string::npos);
  EXPECT_NE(sidecar["sources"][0]["command_line"].get<std::string>().find("all_reduce_perf_mpi -b 8 -e 16g"),
            std::string::npos);
  EXPECT_EQ(sidecar["sources"][0]["hardware_lines"].size(), 18u);  // nThread, 16 ranks, NCCL version
  const CsvTable& p = results.find("p2p")->table;
  EXPECT_EQ(p.get_string(0, "pattern"), "pingpong");
  EXPECT_EQ(p.get_string(0, "link_class"), "network");
  EXPECT_DOUBLE_EQ(p.get_double(0, "latency_us"), 3.19);
  EXPECT_DOUBLE_EQ(p.get_double(0, "time_us_median"), 6.38);

  // The folder must be new (or empty): a second import into it is refused, nothing changes.
  EXPECT_THROW(write_imported_results(runs, dir + "/out", {}), std::runtime_error);
  EXPECT_EQ(load_results_dir(dir + "/out").find("collectives")->table.row_count(), 64u);
}

TEST(ImportWriter, WrongElementsMakeErrorRowsAndRepeatsGetDistinctKeys) {
  const std::string dir = testing::fresh_temp_dir();
  using testing::nccl_row;
  const std::string log = testing::nccl_preamble("all_reduce_perf", 1, 2) + testing::nccl_column_header() +
                          nccl_row({4096, 1024, "float", "sum", -1, 20, 20, 1.0, "5", "0"}) +
                          nccl_row({8192, 2048, "float", "sum", -1, 21, 21, 1.0}) +
                          nccl_row({8192, 2048, "float", "sum", -1, 22, 22, 1.0});
  const auto runs = import_text(dir, log);
  write_imported_results(runs, dir + "/out", {});
  const CsvTable t = CsvTable::read_file(dir + "/out/collectives.csv");
  EXPECT_EQ(t.get_string(0, "status"), "error");
  EXPECT_EQ(t.get_string(0, "verified"), "fail");
  EXPECT_NE(t.get_string(0, "status_detail").find("5 wrong elements"), std::string::npos);
  EXPECT_EQ(t.get_string(4, "point"), "collectives/nccl-tests/allreduce/fp32/sum/n2/oop/8192/rep2");
}


TEST(ImportWriter, CountsAsBenchCollectivesWritesThem) {
  // all_gather_perf at 4 ranks, S = 4096 B of fp32: nccl-tests prints the per-rank count 256.
  const std::string dir = testing::fresh_temp_dir();
  const std::string log = testing::nccl_preamble("all_gather_perf", 2, 2) + testing::nccl_column_header() +
                          testing::nccl_row({4096, 256, "float", "none", -1, 20.0, 19.0, 0.75}) +
                          "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n#\n";
  const auto runs = import_text(dir, log, {}, "all_gather_perf.txt");
  write_imported_results(runs, dir + "/out", {"gpucal", "import"});
  const ResultsDir results = load_results_dir(dir + "/out");
  const CsvTable& c = results.find("collectives")->table;
  ASSERT_GE(c.row_count(), 1u);
  EXPECT_EQ(c.get_int(0, "count"), 256);
  EXPECT_EQ(c.get_int(0, "count_total"), 1024);
  EXPECT_EQ(c.get_int(0, "send_count"), 256);
  EXPECT_EQ(c.get_int(0, "recv_count"), 1024);
}
}  // namespace
}  // namespace gpucal::calibration
