// Steps at once, each with its own timeout (app/fleet/step_pool.h), and the launchers' commands.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "app/fleet/launcher.h"
#include "app/fleet/step_pool.h"

namespace gpucal::fleet {
namespace {

namespace fs = std::filesystem;

std::string log_file(const std::string& name) { return (fs::temp_directory_path() / ("gpucal_step_" + name + ".log")).string(); }

TEST(StepPool, RunsStepsAtOnceAndKeepsTheirExitCodesAndOutput) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_steps({{"sleep 1; echo one", log_file("a"), 30}, {"sleep 1; exit 3", log_file("b"), 30},
                            {"sleep 1; kill -9 $$", log_file("c"), 30}});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.8) << "the steps ran one after the other";
  EXPECT_EQ(r[0].status, 0);
  EXPECT_EQ(r[1].status, 3);
  EXPECT_EQ(r[2].status, 128 + 9);
  std::ifstream in(log_file("a"));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "one");
}

TEST(StepPool, AStepPastItsTimeoutIsStoppedWithItsChildren) {
  const auto r = run_steps({{"sleep 60 & sleep 60; wait", log_file("t"), 0.5}, {"true", log_file("u"), 30}});
  EXPECT_TRUE(r[0].timed_out);
  EXPECT_LT(r[0].seconds, 12);
  EXPECT_FALSE(r[1].timed_out);
  EXPECT_EQ(r[1].status, 0);
}

TEST(StepPool, AStepThatIgnoresSigtermIsKilled) {
  const auto r = run_steps({{"trap '' TERM; sleep 60", log_file("k"), 0.3}});
  EXPECT_TRUE(r[0].timed_out);
  EXPECT_EQ(r[0].status, 128 + 9);
  EXPECT_LT(r[0].seconds, 25);
}

TEST(StepPool, AStragglerIsStoppedOnceTheOthersEnded) {
  StragglerRule rule;
  rule.factor = 2;
  rule.min_s = 1;
  const auto r = run_steps({{"true", log_file("s1"), 100}, {"true", log_file("s2"), 100}, {"true", log_file("s3"), 100},
                            {"sleep 60", log_file("s4"), 100}},
                           rule);
  EXPECT_TRUE(r[3].timed_out);
  EXPECT_LT(r[3].seconds, 10);
  EXPECT_FALSE(r[0].timed_out);
}

// Each step gets a folder of its own in the variable it names (two mpiruns starting at once
// otherwise race on one session folder), with every other variable kept; the folders are
// removed when the steps end.
TEST(StepPool, EachStepGetsItsOwnPrivateFolderRemovedAfterwards) {
  ::setenv("GPUCAL_TEST_PRIVATE_DIR", "inherited", 1);
  const auto r = run_steps({{"test -d \"$GPUCAL_TEST_PRIVATE_DIR\" && echo \"$GPUCAL_TEST_PRIVATE_DIR $HOME\"", log_file("p1"), 30,
                             "GPUCAL_TEST_PRIVATE_DIR"},
                            {"test -d \"$GPUCAL_TEST_PRIVATE_DIR\" && echo \"$GPUCAL_TEST_PRIVATE_DIR $HOME\"", log_file("p2"), 30,
                             "GPUCAL_TEST_PRIVATE_DIR"},
                            {"echo \"$GPUCAL_TEST_PRIVATE_DIR\"", log_file("p3"), 30}});
  ::unsetenv("GPUCAL_TEST_PRIVATE_DIR");
  auto first_line = [](const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  };
  ASSERT_EQ(r[0].status, 0);
  ASSERT_EQ(r[1].status, 0);
  const std::string a = first_line(log_file("p1")), b = first_line(log_file("p2"));
  const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  EXPECT_NE(a.find("gpucal-step."), std::string::npos) << a;
  EXPECT_NE(a.substr(0, a.find(' ')), b.substr(0, b.find(' ')));
  EXPECT_EQ(a.substr(a.find(' ') + 1), home);
  EXPECT_FALSE(fs::exists(a.substr(0, a.find(' ')))) << "left behind";
  EXPECT_EQ(first_line(log_file("p3")), "inherited");
  Launcher slurm, mpirun, local;
  mpirun.kind = Launcher::Kind::mpirun;
  local.kind = Launcher::Kind::local;
  EXPECT_EQ(private_tmpdir_variable(slurm), "");
  EXPECT_EQ(private_tmpdir_variable(mpirun), "");
  EXPECT_EQ(private_tmpdir_variable(local), "OMPI_MCA_orte_tmpdir_base");
}

TEST(Launcher, CommandsForEachLauncher) {
  Launcher slurm;
  const std::string one = single_command(slurm, "n1", "x");
  EXPECT_EQ(one.rfind("srun --overlap --nodes=1 --ntasks=1 --nodelist='n1' --job-name=gpucal-fleet sh -c ", 0), 0u) << one;
  EXPECT_NE(one.find("unset"), std::string::npos) << "the step's variables stay: benches would abort in MPI_Init";
  EXPECT_EQ(one.substr(one.size() - 5), " sh x");
  EXPECT_EQ(mpi_command(slurm, {"n1", "n2"}, 4, "x"),
            "srun --overlap --nodes=2 --ntasks=8 --ntasks-per-node=4 --nodelist='n1,n2' --mpi=pmix --job-name=gpucal-fleet x");
  Launcher mpirun;
  mpirun.kind = Launcher::Kind::mpirun;
  EXPECT_EQ(mpi_command(mpirun, {"a", "b"}, 2, "x"), "mpirun -np 4 --host 'a:2,b:2' x");
  EXPECT_EQ(probe_command(mpirun, "a"), "mpirun -np 1 --host 'a' true");
  Launcher local;
  local.kind = Launcher::Kind::local;
  EXPECT_EQ(single_command(local, "a", "x"), "env GPUCAL_FLEET_NODE='a' x");
}

TEST(Launcher, HostfilesAndNodeLists) {
  const std::string file = log_file("hosts");
  std::ofstream(file) << "# the rack\nnode1 slots=8\nnode2\n\nnode1\nnode3 # spare\n";
  EXPECT_EQ(read_hostfile(file), (std::vector<std::string>{"node1", "node2", "node3"}));
  Launcher l;
  l.kind = Launcher::Kind::mpirun;
  l.hostfile = file;
  EXPECT_EQ(discover_nodes(l, "").size(), 3u);
  EXPECT_EQ(discover_nodes(l, "x,y"), (std::vector<std::string>{"x", "y"}));
  EXPECT_THROW(discover_nodes(l, "x,x"), std::invalid_argument);
  EXPECT_THROW(discover_nodes(l, "a/b"), std::invalid_argument);
  l.hostfile.clear();
  EXPECT_THROW(discover_nodes(l, ""), std::invalid_argument);
  EXPECT_THROW(parse_launcher_kind("ssh"), std::invalid_argument);
}

}  // namespace
}  // namespace gpucal::fleet
