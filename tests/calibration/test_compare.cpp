#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <vector>

#include "app/compare/compare.h"
#include "app/compare/compare_report.h"
#include "app/compare/mann_whitney.h"
#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

using testing::SyntheticOptions;

TEST(MannWhitney, MatchesScipyAsymptoticTwoSided) {
  // scipy.stats.mannwhitneyu([1..5], [6..10], method='asymptotic') -> U=0, p=0.01219
  const auto r = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(r.u_statistic, 0.0);
  EXPECT_NEAR(r.p_value, 0.0121858, 1e-6);
  // With ties: scipy gives U=0.5, p=0.110149 for [1,1,2] vs [2,3,3].
  const auto t = mann_whitney_u({1, 1, 2}, {2, 3, 3});
  EXPECT_DOUBLE_EQ(t.u_statistic, 0.5);
  EXPECT_NEAR(t.p_value, 0.110149, 1e-5);
  EXPECT_DOUBLE_EQ(mann_whitney_u({3, 3, 3}, {3, 3}).p_value, 1.0);
}

struct Runs {
  std::string base, cur;
};

Runs make_runs(const SyntheticOptions& base, const SyntheticOptions& cur) {
  Runs r{testing::fresh_temp_dir("base"), testing::fresh_temp_dir("cur")};
  testing::write_synthetic_results(r.base, base);
  testing::write_synthetic_results(r.cur, cur);
  return r;
}

TEST(Compare, TwoRunsOfTheSameDataPass) {
  const Runs runs = make_runs({}, {});
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  EXPECT_EQ(r.failures(), 0);
  EXPECT_EQ(r.count(Verdict::regression), 0);
  EXPECT_EQ(r.count(Verdict::unchanged), static_cast<int>(r.points.size()));
  EXPECT_TRUE(r.environment_changes.empty());
  for (const auto& p : r.points) EXPECT_EQ(p.test, "mann-whitney-u");
}

TEST(Compare, NoiseAloneIsNotARegression) {
  SyntheticOptions other_seed;
  other_seed.seed = 99;  // same true times, different noise
  const Runs runs = make_runs({}, other_seed);
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  EXPECT_EQ(r.failures(), 0);
}

TEST(Compare, FlagsAPlantedTenPercentSlowdownAndNothingElse) {
  SyntheticOptions slow;
  slow.seed = 5;
  slow.slow_point = testing::synthetic_gemm_point();
  slow.slow_factor = 1.10;
  const Runs runs = make_runs({}, slow);
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  ASSERT_EQ(r.failures(), 1);
  for (const auto& p : r.points) {
    if (p.point == testing::synthetic_gemm_point()) {
      EXPECT_EQ(p.verdict, Verdict::regression);
      EXPECT_NEAR(*p.ratio, 1.10, 0.02);
      EXPECT_LT(*p.p_value, 0.05);
    } else {
      EXPECT_NE(p.verdict, Verdict::regression) << p.point;
    }
  }
}

TEST(Compare, QuantileTestWithoutSampleFilesAndImprovements) {
  SyntheticOptions base, fast;
  base.write_samples = false;
  fast.write_samples = false;
  fast.seed = 3;
  fast.slow_point = testing::synthetic_gemm_point();
  fast.slow_factor = 0.8;
  const Runs runs = make_runs(base, fast);
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  EXPECT_EQ(r.failures(), 0);
  EXPECT_EQ(r.count(Verdict::improvement), 1);
  for (const auto& p : r.points) EXPECT_EQ(p.test, "p10-p90-disjoint");
}

TEST(Compare, SlowdownBelowThresholdIsNotARegression) {
  SyntheticOptions slow;
  slow.slow_point = testing::synthetic_gemm_point();
  slow.slow_factor = 1.03;  // significant with 20 samples at 1% noise, but under 5%
  const Runs runs = make_runs({}, slow);
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  EXPECT_EQ(r.failures(), 0);
}

TEST(Compare, ListsRowsInOneRunAndCallsOutDeviceChanges) {
  SyntheticOptions other;
  other.device = "Other GPU";
  other.driver_version = "560.1";
  const Runs runs = make_runs({}, other);
  std::filesystem::remove(runs.cur + "/attention.csv");
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  EXPECT_EQ(r.count(Verdict::only_in_baseline), 8);
  bool device_called_out = false, driver_called_out = false;
  for (const auto& c : r.environment_changes) {
    if (c.what == "device" && c.current == "Other GPU") device_called_out = true;
    // Each difference is one change, with every file that shows it.
    if (c.what == "versions.driver") {
      driver_called_out = true;
      EXPECT_NE(std::find(c.where.begin(), c.where.end(), "gemm.json"), c.where.end());
      EXPECT_GT(c.where.size(), 1u);
    }
    EXPECT_EQ(c.what.find("timestamp"), std::string::npos);
  }
  EXPECT_TRUE(device_called_out);
  EXPECT_TRUE(driver_called_out);
  std::ostringstream console;
  print_compare_console(r, console);
  EXPECT_EQ(console.str().find("WARNING: the runs differ"), console.str().find("WARNING"));
  EXPECT_LT(console.str().find("WARNING"), console.str().find("verdict"));
}

// Rewrites each sidecar of `dir` with its `loaded_libraries`, from `paths` (file names are the
// entries' names, as bench sidecars write them).
void set_loaded_libraries(const std::string& dir, const std::vector<std::string>& paths) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    nlohmann::json j = nlohmann::json::parse(testing::read_text(entry.path().string()));
    j["loaded_libraries"] = nlohmann::json::array();
    for (const auto& p : paths)
      j["loaded_libraries"].push_back({{"name", std::filesystem::path(p).filename().string()}, {"path", p}});
    std::ofstream(entry.path()) << j.dump(2);
  }
}

TEST(Compare, LibrariesAreMatchedByNameAndEachChangeIsSaidOnce) {
  const Runs runs = make_runs({}, {});
  set_loaded_libraries(runs.base, {"/usr/lib/libopenblas.so.0", "/usr/lib/libgomp.so.1", "/usr/lib/libm.so.6"});
  // One library more at the front, and the same ones from another build folder.
  set_loaded_libraries(runs.cur, {"/opt/x/libextra.so.1", "/build/lib/libopenblas.so.0", "/build/lib/libgomp.so.1",
                                  "/build/lib/libm.so.6"});
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  ASSERT_EQ(r.environment_changes.size(), 1u);
  const EnvironmentChange& c = r.environment_changes.front();
  EXPECT_EQ(c.what, "loaded_libraries[libextra.so.1]");
  EXPECT_EQ(c.baseline, "(absent)");
  EXPECT_EQ(c.current, "present");
  EXPECT_GT(c.where.size(), 2u);  // every bench's sidecar, said once
  std::ostringstream console;
  print_compare_console(r, console);
  EXPECT_NE(console.str().find("(1 change(s)):\n  loaded_libraries[libextra.so.1]: (absent) -> present (gemm.json, attention.json, "),
            std::string::npos)
      << console.str();
}

// Appends a `suspect` column to dir/gemm.csv: `reason` on the row of `point`, empty elsewhere.
void mark_suspect(const std::string& dir, const std::string& point, const std::string& reason) {
  const std::string path = dir + "/gemm.csv";
  std::istringstream in(testing::read_text(path));
  std::string line, out;
  for (bool header = true; std::getline(in, line); header = false)
    out += line + (header ? ",suspect" : line.find(point) != std::string::npos ? "," + reason : ",") + "\n";
  std::ofstream(path) << out;
}

TEST(Compare, ASuspectTimingIsNamedAndNeverUnchangedNorARegression) {
  SyntheticOptions slow;
  slow.seed = 5;
  slow.slow_point = testing::synthetic_gemm_point();
  slow.slow_factor = 1.5;
  const Runs runs = make_runs({}, {});
  mark_suspect(runs.cur, testing::synthetic_gemm_point(), "preempted");
  const Runs slow_runs = make_runs({}, slow);
  mark_suspect(slow_runs.cur, testing::synthetic_gemm_point(), "preempted");
  for (const Runs* pair : {&runs, &slow_runs}) {
    const CompareResult r = compare_runs(load_results_dir(pair->base, true), load_results_dir(pair->cur, true), {});
    EXPECT_EQ(r.failures(), 0);
    EXPECT_EQ(r.count(Verdict::suspect), 1);
    for (const auto& p : r.points)
      if (p.point == testing::synthetic_gemm_point()) {
        EXPECT_EQ(p.verdict, Verdict::suspect);
        EXPECT_EQ(p.detail, "suspect timing in the current run: preempted; rerun to judge this point");
      }
    std::ostringstream console;
    print_compare_console(r, console);
    EXPECT_NE(console.str().find("1 suspect (not judged)"), std::string::npos) << console.str();
  }
}

TEST(Compare, MarkdownAndJunitReports) {
  SyntheticOptions slow;
  slow.slow_point = testing::synthetic_gemm_point();
  slow.slow_factor = 1.10;
  const Runs runs = make_runs({}, slow);
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  write_compare_junit(r, runs.cur + "/junit.xml");
  write_compare_markdown(r, runs.cur + "/compare.md");
  const std::string junit = testing::read_text(runs.cur + "/junit.xml");
  std::size_t testcases = 0;
  for (std::size_t at = junit.find("<testcase "); at != std::string::npos; at = junit.find("<testcase ", at + 1)) ++testcases;
  EXPECT_EQ(testcases, r.points.size());
  EXPECT_NE(junit.find("failures=\"1\""), std::string::npos);
  EXPECT_NE(junit.find("name=\"" + testing::synthetic_gemm_point() + "\""), std::string::npos);
  EXPECT_NE(junit.find("<failure message=\"REGRESSION +10"), std::string::npos);
  const std::string md = testing::read_text(runs.cur + "/compare.md");
  EXPECT_NE(md.find("| **REGRESSION** | gemm | `" + testing::synthetic_gemm_point() + "`"), std::string::npos);
  EXPECT_EQ(xml_escape("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
}

// Two runs with no point in common compare nothing: a failure with its reason in every report,
// never a pass with every test case skipped.
TEST(Compare, NothingComparedIsAFailureInEveryReport) {
  Runs runs{testing::fresh_temp_dir("base"), testing::fresh_temp_dir("cur")};
  const std::string header = "bench,point,status,regime,samples,time_us_median,time_us_p10,time_us_p90\n";
  std::ofstream(runs.base + "/gemm.csv") << header << "gemm,p/1,ok,hot,1,1,1,1\n";
  std::ofstream(runs.cur + "/gemm.csv") << header << "gemm,p/2,ok,hot,1,1,1,1\n";
  const CompareResult r = compare_runs(load_results_dir(runs.base), load_results_dir(runs.cur), {});
  EXPECT_EQ(r.failures(), 0);  // no point regressed; the comparison as a whole failed
  EXPECT_NE(r.nothing_compared().find("no point is ok in both runs (1 only in the baseline, 1 only in the current"),
            std::string::npos)
      << r.nothing_compared();
  write_compare_junit(r, runs.cur + "/junit.xml");
  const std::string junit = testing::read_text(runs.cur + "/junit.xml");
  EXPECT_NE(junit.find("tests=\"3\" failures=\"1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<failure message=\"nothing was compared"), std::string::npos) << junit;
  std::ostringstream console;
  print_compare_console(r, console);
  EXPECT_NE(console.str().find("FAILED: nothing was compared"), std::string::npos);
  EXPECT_FALSE(compare_to_json(r)["nothing_compared"].is_null());
  // The same data twice compares every point: nothing to report.
  const CompareResult same = compare_runs(load_results_dir(runs.base), load_results_dir(runs.base), {});
  EXPECT_EQ(same.nothing_compared(), "");
  EXPECT_TRUE(compare_to_json(same)["nothing_compared"].is_null());
}

// --benchmark_repetitions=N writes N rows of one point (repetition 0..N-1): compare treats
// them as one point, over their pooled samples; a repeated (point, repetition) is an error.
void write_gemm(const std::string& dir, const std::vector<std::pair<int, std::vector<double>>>& reps) {
  std::ofstream csv(dir + "/gemm.csv");
  std::ofstream samples(dir + "/gemm.samples.csv");
  csv << "bench,point,repetition,status,regime,samples,time_us_median,time_us_p10,time_us_p90\n";
  samples << "point,sample,time_us,repetition\n";
  for (const auto& [rep, times] : reps) {
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    csv << "gemm,p/1," << rep << ",ok,hot," << times.size() << "," << sorted[sorted.size() / 2] << ","
        << sorted.front() << "," << sorted.back() << "\n";
    for (size_t i = 0; i < times.size(); ++i) samples << "p/1," << i << "," << times[i] << "," << rep << "\n";
  }
}

TEST(Compare, RepetitionsOfAPointAreAggregated) {
  const std::string base = testing::fresh_temp_dir("base"), cur = testing::fresh_temp_dir("cur");
  write_gemm(base, {{0, {10, 10.1, 10.2, 9.9, 10, 10.1}}});
  write_gemm(cur, {{0, {10, 10.2, 9.9, 10.1, 10, 10}}, {1, {20, 20.5, 19.5, 20, 20.1, 19.9}}, {2, {20, 20.2, 20.1, 19.8, 20, 20}}});
  const CompareResult r = compare_runs(load_results_dir(base), load_results_dir(cur), {});
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].point, "p/1");
  EXPECT_EQ(r.points[0].test, "mann-whitney-u");
  EXPECT_NEAR(*r.points[0].current_median_us, 19.95, 1e-9);  // median of the 18 pooled samples
  EXPECT_EQ(r.points[0].verdict, Verdict::regression);
  // The same repetition twice is a malformed file.
  write_gemm(cur, {{0, {10, 11}}, {0, {10, 11}}});
  EXPECT_THROW(compare_runs(load_results_dir(base), load_results_dir(cur), {}), CsvError);
}

}  // namespace
}  // namespace gpucal::calibration
