// The README's first command end to end: `gpucal run --suite smoke` on the host backend with no
// launcher (the communication benches as rank threads of one process) closes the whole loop:
// every bench ok, the four exports written and loading in each tool's reader
// (conformance_readers.h), a predicted step, summary.md opening with the verdict, and at most 40
// lines on the terminal.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/calibration/conformance_readers.h"
#include "tests/calibration/test_util.h"

#ifndef GPUCAL_BIN_RELATIVE
#error "GPUCAL_BIN_RELATIVE must name the gpucal executable relative to this test's binary"
#endif

namespace gpucal::calibration {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json read_json(const std::string& path) {
  EXPECT_TRUE(fs::exists(path)) << path;
  return fs::exists(path) ? json::parse(testing::read_text(path)) : json();
}

// The four exports as each tool reads them.
void expect_exports_load(const std::string& dir) {
  for (const char* tool : {"calculon", "astrasim", "nersc", "vtrain"})
    EXPECT_TRUE(fs::exists(dir + "/" + tool + "/NOTES.md")) << tool;
  const json calculon = read_json(dir + "/calculon/system.json");
  testing::expect_calculon_system(calculon);
  EXPECT_EQ(calculon["networks"][0]["size"], 4);  // the 4 rank threads: one node's tier
  const testing::AstraSimNetwork network = testing::parse_as_astrasim(dir + "/astrasim/network.yml");
  testing::expect_astrasim_network(network);
  testing::expect_astrasim_system(read_json(dir + "/astrasim/system.json"), network.topology.size());
  testing::expect_nersc_system(read_json(dir + "/nersc/system.json"));
  const json vtrain = read_json(dir + "/vtrain/system_config.json");
  testing::expect_vtrain_config_keys(vtrain);
  const auto tables = testing::read_vtrain_tables(vtrain);
  EXPECT_TRUE(tables.count(2) && tables.count(4)) << "the measured 2- and 4-rank groups' tables";
}

TEST(SmokeRun, ClosesTheWholeLoopOnTheHostBackendWithoutALauncher) {
  const std::string dir = testing::fresh_temp_dir();
  const std::string gpucal = (fs::canonical("/proc/self/exe").parent_path() / GPUCAL_BIN_RELATIVE).string();
  // Outside any allocation, so that gpucal run's own default (threads on this node) is what runs.
  const std::string clean_env =
      "env -u SLURM_JOB_ID -u PBS_JOBID -u LSB_JOBID -u OMPI_COMM_WORLD_SIZE -u PMI_RANK "
      "-u PMIX_RANK ";
  std::string out;
  // --allow-suspect: ctest runs other tests beside this one, and rows that load preempted would
  // be left out of the fits and exports; this checks the loop, not the figures.
  const int rc =
      testing::run_command(clean_env + gpucal + " run --suite smoke --backend host --allow-suspect --out " + dir + "/res",
                           out, dir + "/terminal.log");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_LE(std::count(out.begin(), out.end(), '\n'), 40) << out;
  EXPECT_NE(out.find("collectives and p2p: one process, 4 threads over host memory"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("assumed:"), std::string::npos) << "export notes belong in NOTES.md:\n" << out;

  const std::string res = dir + "/res";
  const std::string summary = testing::read_text(res + "/summary.md");
  EXPECT_EQ(summary.rfind("# gpucal run: suite `smoke`", 0), 0u) << summary;
  const std::size_t first_section = summary.find("\n## ");
  ASSERT_NE(first_section, std::string::npos) << summary;
  EXPECT_EQ(summary.substr(first_section, 13), "\n## Verdict\n\n") << summary;
  for (const char* verdict :
       {"\n- benches: 5 of 5 ok\n", "\n- exports: 6 of 6 written (calculon, astrasim, nersc, vtrain, chakra, simai)",
        "\n- predicted step: ", "\n- fits: ", "\n- below half of this device's peak: ", "\n- host backend: "})
    EXPECT_NE(summary.find(verdict), std::string::npos) << verdict << " in\n" << summary;
  EXPECT_NE(summary.find("## Fits against log-log interpolation"), std::string::npos);
  EXPECT_NE(summary.find("## Stand-ins"), std::string::npos);

  expect_exports_load(res + "/export");
  const json predict = read_json(res + "/predict.json");
  ASSERT_TRUE(predict.contains("breakdown")) << predict.dump();
  EXPECT_GT(predict["breakdown"]["step"]["time_s"].get<double>(), 0);
}

}  // namespace
}  // namespace gpucal::calibration
