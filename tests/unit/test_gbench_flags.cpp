// Google Benchmark 1.7.1's reading of its flags (commandlineflags.cc), which the driver
// mirrors to decide listing, filtering and output, and the flags it takes over.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/driver/gbench_flags.h"

using namespace gpucal;

namespace {
std::map<std::string, std::string> no_env;
const char* lookup(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? nullptr : it->second.c_str();
}
GbenchFlags take(std::vector<std::string>& args, const std::map<std::string, std::string>& env = no_env) {
  return take_gbench_flags(args, [&](const char* n) { return lookup(env, n); });
}
}  // namespace

TEST(GbenchFlags, TruthyValuesAsTheLibraryReadsThem) {
  for (const char* t : {"", "1", "t", "y", "true", "yes", "on", "TRUE", "anything"})
    EXPECT_TRUE(gbench_truthy(t)) << t;
  for (const char* f : {"0", "f", "F", "n", "N", "false", "No", "OFF", "-"})
    EXPECT_FALSE(gbench_truthy(f)) << f;
}

TEST(GbenchFlags, BareListTestsListsAndOpensNoOutputFile) {
  std::vector<std::string> args = {"bench", "--m", "64", "--benchmark_list_tests", "--benchmark_out=x.json"};
  const GbenchFlags f = take(args);
  EXPECT_TRUE(f.list_tests);
  EXPECT_EQ(f.out, "x.json");
  // Left for the library, with an empty --benchmark_out last so it opens nothing.
  EXPECT_EQ(args, (std::vector<std::string>{"bench", "--m", "64", "--benchmark_list_tests",
                                            "--benchmark_out=x.json", "--benchmark_out="}));
}

TEST(GbenchFlags, LastOccurrenceWinsAndTheEnvironmentIsTheDefault) {
  std::vector<std::string> args = {"bench", "--benchmark_list_tests=false"};
  EXPECT_FALSE(take(args, {{"BENCHMARK_LIST_TESTS", "1"}}).list_tests);
  args = {"bench"};
  EXPECT_TRUE(take(args, {{"BENCHMARK_LIST_TESTS", "true"}}).list_tests);
  args = {"bench", "--benchmark_filter=a", "--benchmark_filter=b", "--benchmark_out_format=json"};
  const GbenchFlags f = take(args, {{"BENCHMARK_OUT", "env.json"}});
  EXPECT_EQ(f.filter, "b");
  EXPECT_EQ(f.out, "env.json");  // --benchmark_out_format is another flag
  EXPECT_FALSE(f.list_tests);
  EXPECT_EQ(args.size(), 4u);  // nothing taken, nothing added
}

TEST(GbenchFlags, MinTimeInBothSpellingsAndIterationsIsTakenOver) {
  for (const char* v : {"0.25", "0.25s"}) {
    std::vector<std::string> args = {"bench", std::string("--benchmark_min_time=") + v, "--m", "64"};
    const GbenchFlags f = take(args);
    ASSERT_TRUE(f.min_time_s) << v;
    EXPECT_DOUBLE_EQ(*f.min_time_s, 0.25);
    EXPECT_TRUE(f.error.empty());
    EXPECT_EQ(args, (std::vector<std::string>{"bench", "--m", "64"}));  // the library never sees it
  }
  std::vector<std::string> args = {"bench", "--benchmark_min_time=100x", "--benchmark_min_warmup_time=0.1"};
  GbenchFlags f = take(args);
  EXPECT_EQ(f.min_iterations, 100);
  EXPECT_FALSE(f.min_time_s);
  EXPECT_DOUBLE_EQ(f.min_warmup_time_s.value_or(-1), 0.1);
  EXPECT_EQ(args.size(), 1u);
  for (const char* bad : {"fast", "-1", "0.5ms", "x", "1.5x", ""}) {
    args = {"bench", std::string("--benchmark_min_time=") + bad};
    f = take(args);
    EXPECT_NE(f.error.find("--benchmark_min_time"), std::string::npos) << bad;
    EXPECT_EQ(args.size(), 1u) << "a malformed value must not reach the library: " << bad;
  }
}

// Google Benchmark 1.7.1 answers these with its usage text and exit 0 (or, for a negative
// count, "vector::reserve"): the driver refuses them in one line before anything is opened.
TEST(GbenchFlags, RepetitionsMustMeasureSomething) {
  std::vector<std::string> args = {"bench", "--benchmark_repetitions=3"};
  GbenchFlags f = take(args);
  EXPECT_EQ(f.repetitions, 3);
  EXPECT_TRUE(f.error.empty());
  EXPECT_EQ(args.size(), 2u);  // the library still reads it
  for (const char* bad : {"-1", "two", "", "1.5", "100001"}) {
    args = {"bench", std::string("--benchmark_repetitions=") + bad};
    EXPECT_NE(take(args).error.find("--benchmark_repetitions=" + std::string(bad) + ": expected a count"),
              std::string::npos)
        << bad;
  }
  args = {"bench", "--benchmark_repetitions=0"};
  EXPECT_NE(take(args).error.find("would measure no point"), std::string::npos);
  args = {"bench"};
  EXPECT_NE(take(args, {{"BENCHMARK_REPETITIONS", "0"}}).error.find("BENCHMARK_REPETITIONS=0 (environment)"),
            std::string::npos);
  args = {"bench", "--benchmark_repetitions=2"};  // the command line wins over the environment
  f = take(args, {{"BENCHMARK_REPETITIONS", "0"}});
  EXPECT_TRUE(f.error.empty()) << f.error;
  EXPECT_EQ(f.repetitions, 2);
  args = {"bench", "--benchmark_repetitions=0", "--benchmark_list_tests"};  // listing measures nothing anyway
  EXPECT_TRUE(take(args).error.empty());
}

TEST(GbenchFlags, FormatsAndTimeUnitAreOnesTheLibraryKnows) {
  for (const char* ok : {"--benchmark_format=json", "--benchmark_format=csv", "--benchmark_out_format=console",
                         "--benchmark_time_unit=ms", "--benchmark_time_unit=s", "--benchmark_time_unit=",
                         "--benchmark_color=false"}) {
    std::vector<std::string> args = {"bench", ok};
    EXPECT_TRUE(take(args).error.empty()) << ok;
    EXPECT_EQ(args.size(), 2u) << ok;
  }
  for (const char* bad : {"--benchmark_format=xml", "--benchmark_out_format=JSON", "--benchmark_time_unit=min",
                          "--benchmark_format=", "--benchmark_color="}) {
    std::vector<std::string> args = {"bench", bad};
    EXPECT_EQ(take(args).error.rfind(std::string(bad) + ": expected", 0), 0u) << bad << ": " << take(args).error;
  }
  std::vector<std::string> args = {"bench"};
  EXPECT_EQ(take(args, {{"BENCHMARK_TIME_UNIT", "h"}}).error,
            "BENCHMARK_TIME_UNIT=h (environment): expected ns|us|ms|s");
  args = {"bench", "--benchmark_filter=x"};
  const GbenchFlags f = take(args, {{"BENCHMARK_FILTER", "y"}});
  EXPECT_EQ(f.filter_source, "--benchmark_filter");
  args = {"bench"};
  EXPECT_EQ(take(args, {{"BENCHMARK_FILTER", "y"}}).filter_source, "BENCHMARK_FILTER");
}
