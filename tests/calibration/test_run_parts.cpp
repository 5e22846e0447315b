// The parts of `gpucal run` that decide before and after the benches: how the communication
// benches start (launch_plan.h), the figures supplied to the exports (stand_ins.h), and the fit
// verdict against log-log interpolation (verdict.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "app/fit/calibration_build.h"
#include "app/common/results_dir.h"
#include "app/run/launch_plan.h"
#include "app/run/stand_ins.h"
#include "app/run/suites.h"
#include "app/run/verdict.h"
#include "tests/calibration/conformance_calibration.h"
#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

using nlohmann::json;

// A fake environment for plan_launch, and PATH holding a folder with `programs` in it.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      const auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

void put_on_path(const std::string& dir, std::initializer_list<const char*> programs) {
  for (const char* p : programs) {
    std::ofstream(dir + "/" + p) << "#!/bin/sh\n";
    std::filesystem::permissions(dir + "/" + p, std::filesystem::perms::owner_all);
  }
  ::setenv("PATH", (dir + ":" + std::getenv("PATH")).c_str(), 1);
}

TEST(LaunchPlan, GivenLauncherOrThreadsWin) {
  FakeEnv env{{{"SLURM_JOB_ID", "7"}, {"SLURM_NTASKS", "8"}}};
  const LaunchPlan m = plan_launch({.mpirun = "mpirun -np 2"}, env.lookup(), 8);
  EXPECT_EQ(m.mpirun, "mpirun -np 2");
  EXPECT_TRUE(m.threads.empty());
  const LaunchPlan t = plan_launch({.threads = "3"}, env.lookup(), 8);
  EXPECT_EQ(t.threads, "3");
  EXPECT_TRUE(t.mpirun.empty());
}

TEST(LaunchPlan, OneNodeWithoutLauncherRunsThreads) {
  const FakeEnv env;
  const LaunchPlan host = plan_launch({}, env.lookup(), 0);
  EXPECT_EQ(host.threads, std::to_string(kHostThreads));
  EXPECT_NE(host.how.find("threads over host memory"), std::string::npos) << host.how;
  const LaunchPlan gpus = plan_launch({}, env.lookup(), 8);
  EXPECT_EQ(gpus.threads, "all");
  EXPECT_NE(gpus.how.find("a thread per local GPU (8)"), std::string::npos) << gpus.how;
  // One GPU: no group within the node; the communication benches are skipped, said why.
  const LaunchPlan one = plan_launch({}, env.lookup(), 1);
  EXPECT_TRUE(one.threads.empty() && one.mpirun.empty());
  EXPECT_NE(one.skip.find("one GPU on this node"), std::string::npos) << one.skip;
  // --threads all on a node with one GPU, or --threads 1: one rank, the same verdict.
  const LaunchPlan all_of_one = plan_launch({.threads = "all"}, env.lookup(), 1);
  EXPECT_EQ(all_of_one.threads, "1");
  EXPECT_NE(all_of_one.skip.find("one GPU on this node"), std::string::npos) << all_of_one.skip;
  const LaunchPlan one_thread = plan_launch({.threads = "1"}, env.lookup(), 0);
  EXPECT_NE(one_thread.skip.find("--threads 1: one rank"), std::string::npos) << one_thread.skip;
  EXPECT_TRUE(plan_launch({.threads = "all"}, env.lookup(), 8).skip.empty());
  EXPECT_TRUE(plan_launch({.threads = "2"}, env.lookup(), 0).skip.empty());
}

TEST(OneRank, PredictedStepIsLaidOutOnOneRank) {
  EXPECT_EQ(one_gpu_layout({"--model", "llama3-8b", "--tp", "2", "--dp", "2", "--ranks-per-node", "4", "--quiet"}),
            (std::vector<std::string>{"--model", "llama3-8b", "--tp", "1", "--dp", "1", "--ranks-per-node", "1",
                                      "--quiet"}));
  EXPECT_EQ(one_gpu_layout({"--pp", "4", "--cp", "2", "--ep", "8", "--seq", "4096"}),
            (std::vector<std::string>{"--pp", "1", "--cp", "1", "--ep", "1", "--seq", "4096"}));
}

// The verdict fails closed: what the run was to deliver and did not makes it incomplete (exit
// 1), or spoiled (exit 4) when rows a busy machine spoiled were left out; one rank makes the
// collectives and the network exports not applicable rather than missing.
TEST(Completeness, MissingDeliverablesFailClosedAndOneRankIsNotApplicable) {
  static const Suite suite{.name = "t"};
  RunRecord r{.suite = &suite};
  r.predict_args = {"--model", "m"};
  r.benches = {{.bench = "gemm", .status = "ok", .ok_rows = 4}, {.bench = "collectives", .status = "skipped"}};
  r.calibration = json::object();
  r.exports = {{.consumer = "chakra"}, {.consumer = "astrasim", .refused = {"network dimension 0: ..."}}};
  r.predict.path = "predict.json";
  r.predict.result = {{"breakdown", {{"step", {{"time_s", 0.1}}}, {"tokens_per_s", 10.0}}}};
  Completeness c = completeness(r);
  EXPECT_EQ(c.missing, std::vector<std::string>{"1 export(s) refused"});
  EXPECT_EQ(run_exit_code(c), 1);
  r.single_rank = "one GPU on this node";
  r.exports_not_applicable = {"astrasim"};
  c = completeness(r);
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(run_exit_code(c), 0);
  EXPECT_EQ(verdict_lines(r).front().rfind("complete: ", 0), 0u) << verdict_lines(r).front();
  // No predicted step, with suspect rows left out: spoiled, exit 4, and the verdict says rerun.
  r.predict.path.clear();
  r.suspect_rows = 31;
  c = completeness(r);
  EXPECT_EQ(c.missing, std::vector<std::string>{"no predicted step"});
  EXPECT_TRUE(c.spoiled);
  EXPECT_EQ(run_exit_code(c), kExitRunSpoiled);
  EXPECT_NE(verdict_lines(r).front().find("INCOMPLETE: no predicted step (31 suspect row(s) were left out: the machine "
                                          "was busy; rerun on a quiet machine)"),
            std::string::npos)
      << verdict_lines(r).front();
  // With --allow-suspect the rows were used: a missing step is then a plain failure.
  r.allow_suspect = true;
  EXPECT_EQ(run_exit_code(completeness(r)), 1);
  // A bench that failed is a failure whatever else: not "spoiled".
  r.allow_suspect = false;
  r.benches.push_back({.bench = "memory", .status = "failed (exit 1)"});
  c = completeness(r);
  EXPECT_TRUE(c.bench_failed);
  EXPECT_FALSE(c.spoiled);
  EXPECT_EQ(run_exit_code(c), 1);
  // Nothing measured at all.
  RunRecord empty{.suite = &suite};
  empty.benches = {{.bench = "gemm", .status = "ok"}};
  EXPECT_EQ(completeness(empty).missing, std::vector<std::string>{"measured nothing (no bench wrote an ok row)"});
}

TEST(LaunchPlan, InsideAnAllocationUsesItsLauncher) {
  const std::string dir = testing::fresh_temp_dir();
  const std::string saved_path = std::getenv("PATH");
  put_on_path(dir, {"srun", "mpirun"});
  FakeEnv slurm{{{"SLURM_JOB_ID", "42"}, {"SLURM_NTASKS", "16"}}};
  const LaunchPlan s = plan_launch({}, slurm.lookup(), 4);
  EXPECT_EQ(s.mpirun, "srun");
  EXPECT_NE(s.how.find("Slurm allocation 42"), std::string::npos) << s.how;
  // One task: nothing to launch ranks with; threads on this node.
  slurm.vars["SLURM_NTASKS"] = "1";
  EXPECT_EQ(plan_launch({}, slurm.lookup(), 4).threads, "all");
  FakeEnv pbs{{{"PBS_JOBID", "9.server"}}};
  EXPECT_EQ(plan_launch({}, pbs.lookup(), 0).mpirun, "mpirun");
  // gpucal itself a rank of a launch: no launcher inside it.
  FakeEnv rank{{{"SLURM_JOB_ID", "42"}, {"SLURM_NTASKS", "16"}, {"OMPI_COMM_WORLD_SIZE", "2"}}};
  const LaunchPlan r = plan_launch({}, rank.lookup(), 0);
  EXPECT_TRUE(r.mpirun.empty());
  EXPECT_NE(r.how.find("no launcher inside it"), std::string::npos) << r.how;
  // --threads auto (a fleet's node phase with --backend auto): this node's own ranks inside any
  // allocation: a thread per GPU, the host's threads on a CPU node, one GPU skipped.
  const LaunchPlan cpu = plan_launch({.threads = "auto"}, slurm.lookup(), 0);
  EXPECT_TRUE(cpu.mpirun.empty());
  EXPECT_EQ(cpu.threads, std::to_string(kHostThreads));
  EXPECT_NE(cpu.how.find("(--threads auto)"), std::string::npos) << cpu.how;
  slurm.vars["SLURM_NTASKS"] = "16";
  const LaunchPlan eight = plan_launch({.threads = "auto"}, slurm.lookup(), 8);
  EXPECT_TRUE(eight.mpirun.empty());
  EXPECT_EQ(eight.threads, "all");
  EXPECT_NE(plan_launch({.threads = "auto"}, slurm.lookup(), 1).skip.find("one GPU on this node"), std::string::npos);
  ::setenv("PATH", saved_path.c_str(), 1);
}

TEST(StandIns, SupplyWhatNoBenchMeasuresEachToItsExport) {
  const std::string dir = testing::fresh_temp_dir();
  std::ofstream(dir + "/p2p.csv")
      << "status,pattern,direction,size_bytes,bandwidth_gbps\n"
      << "ok,copy,h2d,1048576,20\nok,copy,h2d,268435456,25\nok,copy,d2d,268435456,2000\n"
      << "ok,copy,h2h,268435456,9\n";
  const std::string meminfo = "MemFree: 1 kB\nMemTotal:       2097152 kB\n";
  // One node measured: NERSC's ib_* from the intra-node allreduce; Calculon's offload tier and
  // processor_usage.
  const auto one_node = stand_ins_for(testing::conformance_calibration(false), dir + "/p2p.csv", meminfo);
  std::map<std::string, StandIn> by_key;
  for (const auto& s : one_node) by_key[s.key] = s;
  EXPECT_EQ(std::stod(by_key.at("offload_gbps").value), 25);  // h2d at its largest size
  EXPECT_EQ(std::stod(by_key.at("offload_gib").value), 2);
  EXPECT_EQ(by_key.at("processor_usage").consumer, "calculon");
  EXPECT_EQ(by_key.at("inter_busbw_gbps").consumer, "nersc");
  EXPECT_GT(std::stod(by_key.at("inter_busbw_gbps").value), 0);
  EXPECT_GT(std::stod(by_key.at("inter_alpha_us").value), 0);
  EXPECT_TRUE(settings_for(one_node, "nersc").has("inter_busbw_gbps"));
  EXPECT_FALSE(settings_for(one_node, "calculon").has("inter_busbw_gbps"));
  // Measured across nodes: nothing stands in for it.
  for (const auto& s : stand_ins_for(testing::conformance_calibration(true), "", ""))
    EXPECT_NE(s.key.rfind("inter_", 0), 0u) << s.key;
}

TEST(FitVerdict, ComparesEachGroupsHeldOutErrorWithInterpolations) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir);
  const auto fits = fit_verdicts(build_calibration(load_results_dir(dir)));
  ASSERT_FALSE(fits.empty());
  for (const auto& f : fits) {
    EXPECT_GE(f.fit_pct, 0) << f.group;
    EXPECT_GE(f.loglog_pct, 0) << f.group;
    EXPECT_GT(f.sizes, 0) << f.group;
  }
  EXPECT_TRUE((FitVerdict{.fit_pct = 5, .loglog_pct = 4}).as_good());    // within 2 points
  EXPECT_TRUE((FitVerdict{.fit_pct = 32, .loglog_pct = 30}).as_good());  // within 10%
  EXPECT_FALSE((FitVerdict{.fit_pct = 40, .loglog_pct = 30}).as_good());
}

}  // namespace
}  // namespace gpucal::calibration
