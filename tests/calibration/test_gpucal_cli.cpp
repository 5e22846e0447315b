// The gpucal command end to end: exit codes, one-line errors, compare's JUnit, run's skipping.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <csignal>
#include <thread>
#include <chrono>
#include <fstream>
#include <regex>

#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

#ifndef GPUCAL_BIN_RELATIVE
#error "GPUCAL_BIN_RELATIVE must name the gpucal executable relative to this test's binary"
#endif

namespace gpucal::calibration {
namespace {

// gpucal beside this binary's build folder, wherever that folder now is.
std::string gpucal_bin() {
  return (std::filesystem::canonical("/proc/self/exe").parent_path() / GPUCAL_BIN_RELATIVE).string();
}

int gpucal(const std::string& args, std::string& output, const std::string& dir) {
  return testing::run_command(gpucal_bin() + " " + args, output, dir + "/gpucal.log");
}

TEST(GpucalCli, CompareOfAScaledRunExitsNonZeroWithJunitFailures) {
  const std::string dir = testing::fresh_temp_dir();
  testing::SyntheticOptions slower;
  slower.time_scale = 1.2;
  slower.seed = 11;
  testing::write_synthetic_results(dir + "/base");
  testing::write_synthetic_results(dir + "/cur", slower);
  std::string out;
  EXPECT_EQ(gpucal("compare " + dir + "/base " + dir + "/cur --junit " + dir + "/junit.xml --markdown " + dir +
                       "/cmp.md --json " + dir + "/cmp.json",
                   out, dir),
            1)
      << out;
  const std::string junit = testing::read_text(dir + "/junit.xml");
  EXPECT_NE(junit.find("<failure"), std::string::npos);
  EXPECT_NE(out.find("REGRESSION"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir + "/cmp.md"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/cmp.json"));
  // A 20% slowdown is still within a 25% threshold.
  EXPECT_EQ(gpucal("compare " + dir + "/base " + dir + "/cur --threshold 0.25", out, dir), 0) << out;
}

TEST(GpucalCli, CompareOfIdenticalRunsExitsZero) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir + "/base");
  std::filesystem::copy(dir + "/base", dir + "/cur");
  std::string out;
  EXPECT_EQ(gpucal("compare " + dir + "/base " + dir + "/cur --junit " + dir + "/junit.xml", out, dir), 0) << out;
  EXPECT_EQ(testing::read_text(dir + "/junit.xml").find("<failure"), std::string::npos);
}

TEST(GpucalCli, FitAndExportWriteTheirFiles) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir + "/r");
  std::string out;
  ASSERT_EQ(gpucal("fit " + dir + "/r", out, dir), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/r/calibration.json"));
  // Calculon lacks figures no bench measured: refused with one stderr line per figure, exit 2,
  // the other consumers written.
  const std::string cmd = "export " + dir + "/r/calibration.json --to all --out " + dir + "/x";
  EXPECT_EQ(gpucal(cmd, out, dir), 2) << out;
  EXPECT_NE(out.find("gpucal: export calculon refused: mem2.GBps:"), std::string::npos) << out;
  EXPECT_NE(out.find("--set processor_usage=0.05"), std::string::npos) << out;
  for (const char* f : {"astrasim/network.yml", "astrasim/system.json", "vtrain/synthetic_gpu/AR_GPU2_1M_1024M_LUT"})
    EXPECT_TRUE(std::filesystem::exists(dir + "/x/" + f)) << f;
  EXPECT_FALSE(std::filesystem::exists(dir + "/x/calculon/system.json"));
  EXPECT_EQ(gpucal("export " + dir + "/r --to nersc --out " + dir + "/y --set vector_tflops=60", out, dir), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/y/nersc/system.json"));
  // --to takes a comma list like every list flag: each target written, in the order given.
  EXPECT_EQ(gpucal("export " + dir + "/r --to vtrain,astrasim --out " + dir + "/z", out, dir), 0) << out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/z/astrasim/system.json"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/z/vtrain/synthetic_gpu/AR_GPU2_1M_1024M_LUT"));
  EXPECT_LT(out.find("vtrain: wrote"), out.find("astrasim: wrote")) << out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/z/nersc"));
  EXPECT_EQ(gpucal(cmd + " --set processor_usage=2", out, dir), 2);
  EXPECT_EQ(out, "gpucal: error: --set processor_usage=2: expected a fraction, 0 <= value < 1\n");
}

TEST(GpucalCli, BadInputGivesAOneLineErrorAndExitTwo) {
  const std::string dir = testing::fresh_temp_dir();
  std::string out;
  EXPECT_EQ(gpucal("fit " + dir + "/missing", out, dir), 2);
  EXPECT_EQ(out, "gpucal: error: " + dir + "/missing: not a directory\n");
  std::ofstream(dir + "/gemm.csv") << "bench,point,status\n\"gemm,x,ok\n";
  EXPECT_EQ(gpucal("fit " + dir, out, dir), 2);
  EXPECT_NE(out.find("unterminated quoted field"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(gpucal("export " + dir + " --to nowhere", out, dir), 0);
  EXPECT_EQ(gpucal("run --no-such-flag", out, dir), 2);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(gpucal("run --suite nosuch --out " + dir + "/o", out, dir), 0);
  EXPECT_NE(out.find("unknown suite 'nosuch'"), std::string::npos) << out;
}

TEST(GpucalCli, RunSkipsBenchesThatAreNotBuiltAndRunsTheOnesThatAre) {
  const std::string dir = testing::fresh_temp_dir();
  // A stand-in bench_gemm: records its arguments and writes a CSV where --out says.
  testing::write_synthetic_results(dir + "/canned");
  std::filesystem::create_directories(dir + "/bin");
  {
    std::ofstream script(dir + "/bin/bench_gemm");
    script << "#!/bin/sh\necho \"$@\" > " << dir << "/args.txt\nsleep 0.3\n"
           << "while [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then cp " << dir << "/canned/gemm.csv \"$2\"; fi; shift; done\n";
  }
  std::filesystem::permissions(dir + "/bin/bench_gemm", std::filesystem::perms::owner_all);
  std::string out;
  // Four benches missing: the run measures what it can, then fails closed (exit 1), naming them.
  EXPECT_EQ(gpucal("run --suite smoke --backend host --bin-dir " + dir + "/bin --out " + dir + "/res --no-plots", out, dir),
            1)
      << out;
  EXPECT_NE(out.find("  p2p          not built: no bench_p2p in " + dir + "/bin\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("gpucal: error: suite smoke incomplete: attention not built and more; see " + dir +
                     "/res/summary.md\n"),
            std::string::npos)
      << out;
  const std::string args = testing::read_text(dir + "/args.txt");
  EXPECT_NE(args.find("--backend host --out " + dir + "/res/gemm.csv --quiet --max-time-per-point"), std::string::npos)
      << args;
  EXPECT_NE(args.find("--m 128,512"), std::string::npos) << args;
  EXPECT_TRUE(std::filesystem::exists(dir + "/res/calibration.json"));
  const std::string summary = testing::read_text(dir + "/res/summary.md");
  EXPECT_NE(summary.find("### calculon: refused, nothing written"), std::string::npos)
      << summary;  // no networks measured
  EXPECT_EQ(summary.rfind("# gpucal run: suite `smoke`", 0), 0) << summary;
  EXPECT_NE(summary.find("## Verdict\n\n- INCOMPLETE: attention not built, collectives not built, p2p not built, "
                         "memory not built, 7 export(s) refused, no predicted step\n- benches: 1 of 5 ok; attention not built"),
            std::string::npos)
      << summary;
  // Each bench's wall time (the stand-in sleeps 0.3 s), in the log and the summary; '-' for one that did not run.
  std::smatch took;
  ASSERT_TRUE(std::regex_search(summary, took,
                                std::regex(R"(\| gemm \| ok \| [0-9]+ \([0-9]+ ok\) \| ([0-9.]+) s \|)")))
      << summary;
  EXPECT_GE(std::stod(took[1]), 0.3) << summary;
  EXPECT_LT(std::stod(took[1]), 30.0) << summary;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(\n  gemm +ok +[0-9]+ points.*  [0-9.]+ s\n)"))) << out;
  EXPECT_NE(summary.find("| p2p | not built: no bench_p2p in " + dir + "/bin | - | - |"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("The benches took "), std::string::npos) << summary;
}

TEST(GpucalCli, RunPassesThreadsToTheCommunicationBenchesInsteadOfALauncher) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir + "/canned");
  std::filesystem::create_directories(dir + "/bin");
  for (const std::string bench : {"collectives", "p2p"}) {
    std::ofstream script(dir + "/bin/bench_" + bench);
    script << "#!/bin/sh\necho \"$@\" > " << dir << "/" << bench << ".args\n"
           << "while [ $# -gt 0 ]; do if [ \"$1\" = --out ]; then cp " << dir << "/canned/" << bench
           << ".csv \"$2\"; fi; shift; done\n";
    script.close();
    std::filesystem::permissions(dir + "/bin/bench_" + bench, std::filesystem::perms::owner_all);
  }
  std::string out;
  EXPECT_EQ(gpucal("run --suite smoke --backend host --threads 4 --bin-dir " + dir + "/bin --out " + dir + "/res --no-plots",
                   out, dir),
            1)  // gemm, attention and memory are not built here: incomplete
      << out;
  for (const std::string bench : {"collectives", "p2p"}) {
    const std::string args = testing::read_text(dir + "/" + bench + ".args");
    EXPECT_NE(args.find(" --threads 4"), std::string::npos) << bench << ": " << args;
  }
  EXPECT_NE(out.find("  gemm         not built"), std::string::npos) << out;
  EXPECT_NE(out.find("collectives and p2p: 4 rank threads in one process (--threads)"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("mpirun"), std::string::npos) << out;
  // One or the other: a launcher prefix and --threads together is bad input.
  EXPECT_EQ(gpucal("run --suite smoke --threads 2 --mpirun mpirun --out " + dir + "/o", out, dir), 2) << out;
  EXPECT_EQ(out, "gpucal: error: --mpirun excludes --threads\n");
}

TEST(GpucalCli, RunRefusesWhatWouldFailOrMixRunsBeforeAnyBenchStarts) {
  const std::string dir = testing::fresh_temp_dir();
  std::filesystem::create_directories(dir + "/bin");
  {
    std::ofstream script(dir + "/bin/bench_gemm");
    script << "#!/bin/sh\ntouch " << dir << "/ran\n";
  }
  std::filesystem::permissions(dir + "/bin/bench_gemm", std::filesystem::perms::owner_all);
  const std::string run = "run --suite smoke --bin-dir " + dir + "/bin --no-plots ";
  std::string out;
  // A folder holding an earlier run's files: its CSVs would be fitted with this run's.
  std::filesystem::create_directories(dir + "/old");
  std::ofstream(dir + "/old/collectives.csv") << "schema_version,bench\n";
  EXPECT_EQ(gpucal(run + "--backend host --out " + dir + "/old", out, dir), 2) << out;
  EXPECT_EQ(out, "gpucal: error: --out: '" + dir + "/old' exists and is not empty; gpucal run writes a new results folder\n");
  EXPECT_EQ(gpucal(run + "--backend host --threads all --out " + dir + "/a", out, dir), 2) << out;
  EXPECT_NE(out.find("--threads all: counts GPUs, and the host backend has none"), std::string::npos) << out;
  EXPECT_EQ(gpucal(run + "--backend host --mpirun 'no-such-launcher -np 2' --out " + dir + "/b", out, dir), 2) << out;
  EXPECT_EQ(out, "gpucal: error: --mpirun: 'no-such-launcher' is not an executable file or on PATH\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/ran"));  // no bench started
  EXPECT_TRUE(std::filesystem::exists(dir + "/old/collectives.csv"));
  // An empty folder is a new one (the stand-in writes no CSV, so the run ends with nothing to fit: exit 1).
  std::filesystem::create_directories(dir + "/empty");
  EXPECT_EQ(gpucal(run + "--backend host --out " + dir + "/empty", out, dir), 1) << out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/ran")) << out;
}

TEST(GpucalCli, OutputsNeverOverwriteTheResultsTheCommandReads) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir + "/r");
  const std::string gemm_before = testing::read_text(dir + "/r/gemm.csv");
  const std::string sidecar_before = testing::read_text(dir + "/r/gemm.json");
  std::string out;
  EXPECT_EQ(gpucal("fit " + dir + "/r -o " + dir + "/r/gemm.csv", out, dir), 2) << out;
  EXPECT_EQ(out, "gpucal: error: --output: '" + dir + "/r/gemm.csv' is one of the results this command reads (" + dir +
                     "/r); write the output elsewhere\n");
  EXPECT_EQ(gpucal("compare " + dir + "/r " + dir + "/r --json " + dir + "/r/../r/gemm.json", out, dir), 2) << out;
  EXPECT_NE(out.find("--json: "), std::string::npos) << out;
  EXPECT_EQ(gpucal("compare " + dir + "/r " + dir + "/r --markdown " + dir + "/x --junit " + dir + "/x", out, dir), 2)
      << out;
  EXPECT_EQ(out, "gpucal: error: --markdown and --junit name the same file '" + dir + "/x'\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/x"));
  EXPECT_EQ(gpucal("predict " + dir + "/r --model llama3-8b --scale 8 --layers 1 --allow-missing --output " + dir +
                       "/r/gemm.csv",
                   out, dir),
            2)
      << out;
  EXPECT_NE(out.find("--output: "), std::string::npos) << out;
  EXPECT_EQ(testing::read_text(dir + "/r/gemm.csv"), gemm_before);
  EXPECT_EQ(testing::read_text(dir + "/r/gemm.json"), sidecar_before);
  // Its own outputs are fine: the default calibration.json, a new file in the folder.
  EXPECT_EQ(gpucal("fit " + dir + "/r", out, dir), 0) << out;
  EXPECT_EQ(gpucal("compare " + dir + "/r " + dir + "/r --json " + dir + "/r/compare.json", out, dir), 0) << out;
}

// SIGTERM to gpucal run (or SIGINT, which Ctrl-C sends to gpucal's group only: each bench runs
// in a group of its own) is passed on to the running bench; nothing more is started, and the
// run ends with 128 + the signal. Before, SIGTERM left the bench running with the folder
// unlocked, and Ctrl-C stopped one bench at a time.
TEST(GpucalCli, RunPassesASignalOnToTheBenchAndStops) {
  for (const char* sig : {"TERM", "INT"}) {
    const std::string dir = testing::fresh_temp_dir();
    std::filesystem::create_directories(dir + "/bin");
    for (const std::string bench : {"gemm", "attention"}) {
      std::ofstream script(dir + "/bin/bench_" + bench);
      // The bench is the sleep itself (exec): its pid is the one gpucal must stop.
      script << "#!/bin/sh\necho $$ > " << dir << "/" << bench << ".pid\nexec sleep 30\n";
      script.close();
      std::filesystem::permissions(dir + "/bin/bench_" + bench, std::filesystem::perms::owner_all);
    }
    const std::string run = gpucal_bin() + " run --suite smoke --backend host --no-plots --bin-dir " + dir +
                            "/bin --out " + dir + "/res";
    const std::string script = "(" + run + " > " + dir + "/log 2>&1 & pid=$!; " + "while [ ! -s " + dir +
                               "/gemm.pid ]; do sleep 0.05; done; date +%s.%N > " + dir + "/t_kill; kill -" + sig +
                               " $pid; wait $pid; echo $? > " + dir + "/rc; date +%s.%N > " + dir + "/t_done)";
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(std::system(("sh -c '" + script + "'").c_str()), 0);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0)
        << "kill at " << testing::read_text(dir + "/t_kill") << "gpucal done at " << testing::read_text(dir + "/t_done")
        << testing::read_text(dir + "/log");
    EXPECT_EQ(testing::read_text(dir + "/rc"), std::string(sig) == "TERM" ? "143\n" : "130\n") << sig;
    const pid_t bench = std::stoi(testing::read_text(dir + "/gemm.pid"));
    for (int i = 0; i < 100 && ::kill(bench, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_NE(::kill(bench, 0), 0) << sig << ": the bench outlived gpucal";
    EXPECT_FALSE(std::filesystem::exists(dir + "/attention.pid")) << "a bench started after the signal";
    EXPECT_NE(testing::read_text(dir + "/log").find(std::string("stopped by SIG") + sig), std::string::npos);
    EXPECT_NE(testing::read_text(dir + "/res/summary.md").find(std::string("Stopped by SIG") + sig), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir + "/res/calibration.json"));
  }
}

// A FIFO given as an input blocked forever in open(); a directory read as the C++ library's
// "basic_filebuf::underflow" text. Both are one line naming the file, exit 2.
TEST(GpucalCli, FifosAndDirectoriesAsInputsAreOneLineErrorsNotHangs) {
  const std::string dir = testing::fresh_temp_dir();
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  std::filesystem::create_directories(dir + "/r");
  ASSERT_EQ(::mkfifo((dir + "/r/gemm.csv").c_str(), 0600), 0);
  std::string out;
  EXPECT_EQ(gpucal("import " + dir + "/fifo --out " + dir + "/i", out, dir), 2) << out;
  EXPECT_NE(out.find("is a FIFO, not a regular file"), std::string::npos) << out;
  EXPECT_EQ(gpucal("fit " + dir + "/r", out, dir), 2) << out;
  EXPECT_NE(out.find(dir + "/r/gemm.csv: is a FIFO"), std::string::npos) << out;
  EXPECT_EQ(gpucal("predict " + dir + "/r --model-config " + dir + "/fifo", out, dir), 2) << out;
  EXPECT_NE(out.find("is a FIFO"), std::string::npos) << out;
  testing::write_synthetic_results(dir + "/s");
  EXPECT_EQ(gpucal("predict " + dir + "/s --model-config " + dir + "/r --allow-missing", out, dir), 2) << out;
  EXPECT_NE(out.find("--model-config: '" + dir + "/r' is a directory, not a file"), std::string::npos) << out;
  for (const std::string& o : {out}) EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 1) << o;
}

}  // namespace
}  // namespace gpucal::calibration
