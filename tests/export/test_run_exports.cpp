// gpucal run's export step (app/run/run_steps.h) on the synthetic results: the workload targets
// and the target a tool runs with them (ASTRA-sim's network and system, with chakra's traces) are
// written for the suite's step with predict's flags, byte for byte what `gpucal export --to
// astrasim --model ...` writes, and each NOTES.md says which model and layout it was written for.
#include <gtest/gtest.h>

#include <sstream>

#include "app/run/run_steps.h"
#include "tests/calibration/test_util.h"
#include "tests/export/workload_fixture.h"

namespace gpucal::calibration::testing {
namespace {

const char* kLayout = "--dtype bf16 --tp 2 --dp 2 --ranks-per-node 2";

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(RunExports, TheTracesAndAstraSimsFilesAreForTheSuitesStep) {
  const std::string dir = workload_fixture_dir();
  RunRecord r;
  r.out_dir = dir + "/results";
  r.predict_args = words("--model-config " + dir + "/dense.json " + kLayout + " --quiet");
  r.predict_label = "test-dense, tp 2 x dp 2";
  std::ostringstream log;
  fit_step(r, log);
  export_step(r, log);
  ASSERT_TRUE(r.export_error.empty()) << log.str();
  for (const char* t : {"astrasim", "chakra", "simai"})
    EXPECT_NE(std::find(r.exports_for_step.begin(), r.exports_for_step.end(), t), r.exports_for_step.end())
        << t << "\n" << log.str();
  const std::string run_export = r.out_dir + "/export/";

  // The workload-aware fields, as `gpucal export` writes them with the same flags.
  std::string out;
  ASSERT_EQ(run_gpucal("export results --to astrasim --model-config dense.json " + std::string(kLayout) +
                           " --out by_hand",
                       out, dir),
            0)
      << out;
  for (const char* file : {"network.yml", "system.json"})
    EXPECT_EQ(read_text(run_export + "astrasim/" + file), read_text(dir + "/by_hand/astrasim/" + file)) << file;
  const std::string astrasim = read_text(run_export + "astrasim/NOTES.md");
  EXPECT_NE(astrasim.find("## Workload-aware fields"), std::string::npos) << astrasim;
  EXPECT_NE(astrasim.find("The step (`--model`): test-dense"), std::string::npos) << astrasim;

  // NOTES.md, under its title: the model and layout, and that the pair goes together.
  const std::string flags = "--model-config " + dir + "/dense.json " + kLayout + "`";
  for (const char* t : {"astrasim", "chakra"}) {
    const std::string notes = read_text(run_export + t + "/NOTES.md");
    const std::string opening = notes.substr(0, notes.find("\n- wrote"));
    EXPECT_NE(opening.find("Written for the suite's step, the one predict.json predicts: test-dense, tp 2 x dp 2"),
              std::string::npos)
        << opening;
    EXPECT_NE(opening.find(flags), std::string::npos) << opening;
    EXPECT_NE(opening.find("the two go together (ASTRA-sim runs them together)"), std::string::npos) << opening;
    EXPECT_NE(opening.find(" --to astrasim,chakra "), std::string::npos) << opening;
  }
  EXPECT_NE(read_text(run_export + "chakra/NOTES.md").find("export/astrasim/ is for the same step"), std::string::npos);
  const std::string simai = read_text(run_export + "simai/NOTES.md");
  EXPECT_NE(simai.substr(0, simai.find("\n- wrote")).find(flags), std::string::npos) << simai;
  const std::string nersc = read_text(run_export + "nersc/NOTES.md");
  EXPECT_NE(nersc.find("Written for no particular model or layout"), std::string::npos) << nersc;
  EXPECT_EQ(nersc.find("Workload-aware"), std::string::npos) << nersc;
}

// Calculon's NOTES.md says first why networks[0].latency is not the Calibration table's alpha.
TEST(RunExports, CalculonSaysWhereItsLatencyComesFrom) {
  const std::string dir = workload_fixture_dir();
  std::string out;
  // The fixture measures only allreduce across nodes: the inter-node tier by hand.
  ASSERT_EQ(run_gpucal("export results --to calculon --set processor_usage=0.05 --set offload_gbps=50 "
                       "--set offload_gib=512 --set nodes=2 --set inter_busbw_gbps=20 --set inter_alpha_us=25 "
                       "--out out",
                       out, dir),
            0)
      << out;
  const std::string notes = read_text(dir + "/out/calculon/NOTES.md");
  const std::string lead = notes.substr(notes.find("\n\n") + 2, notes.find("\n- wrote") - notes.find("\n\n") - 2);
  EXPECT_EQ(lead.rfind("networks[0].latency ", 0), 0u) << notes;
  EXPECT_NE(lead.find("the allreduce line through the communication model's times at the two largest measured sizes "
                      "(the bandwidth end)"),
            std::string::npos)
      << lead;
  EXPECT_NE(lead.find("not the Calibration table's alpha_us"), std::string::npos) << lead;
}

}  // namespace
}  // namespace gpucal::calibration::testing
