// --repeat-process on synthetic runs: the merge (app/run/process_runs.h), the spread between
// processes (app/common/process_spread.h) and compare's judgement on it
// (app/compare/process_compare.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/common/csv_table.h"
#include "app/common/process_spread.h"
#include "app/compare/process_compare.h"
#include "app/run/process_runs.h"

using namespace gpucal::calibration;
namespace fs = std::filesystem;

namespace {

const char* kHeader =
    "schema_version,bench,point,repetition,status,time_us_median,time_us_p10,time_us_p90,process_run\n";

// One process's CSV: point a at `a_us` (two in-process repetitions), point b at `b_us`.
std::string run_csv(double a_us, double b_us) {
  std::ostringstream s;
  s << kHeader << "2,memory,a,0,ok," << a_us << "," << a_us * 0.9 << "," << a_us * 1.1 << ",0\n"
    << "2,memory,a,1,ok," << a_us << "," << a_us * 0.9 << "," << a_us * 1.1 << ",0\n"
    << "2,memory,b,0,ok," << b_us << "," << b_us * 0.95 << "," << b_us * 1.05 << ",0\n";
  return s.str();
}

// A table of one point measured by processes with these medians.
CsvTable processes(const std::vector<double>& medians) {
  std::ostringstream s;
  s << kHeader;
  for (size_t k = 0; k < medians.size(); ++k)
    s << "2,memory,p," << k << ",ok," << medians[k] << "," << medians[k] * 0.98 << "," << medians[k] * 1.02
      << "," << k << "\n";
  return CsvTable::parse(s.str(), "synthetic");
}

std::vector<std::size_t> all_rows(const CsvTable& t) {
  std::vector<std::size_t> rows(t.row_count());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return rows;
}

PointComparison judge(const std::vector<double>& base, const std::vector<double>& cur,
                      bool* judged = nullptr) {
  const CsvTable b = processes(base), c = processes(cur);
  PointComparison out;
  const bool j = compare_by_processes(b, all_rows(b), c, all_rows(c), CompareOptions{}, out);
  if (judged) *judged = j;
  return out;
}

}  // namespace

TEST(ProcessRuns, MergeNumbersProcessesAndRepetitionsAndJoinsTheSamples) {
  const fs::path dir = fs::path(testing::TempDir()) / "process_runs_merge";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> csvs;
  const double a[] = {100, 200, 110}, b[] = {50, 52, 51};
  for (int k = 0; k < 3; ++k) {
    const std::string csv = (dir / ("memory." + std::to_string(k) + ".csv")).string();
    std::ofstream(csv) << run_csv(a[k], b[k]);
    std::ofstream(dir / ("memory." + std::to_string(k) + ".samples.csv"))
        << "point,sample,time_us,repetition\na,0," << a[k] << ",0\na,0," << a[k] << ",1\nb,0," << b[k]
        << ",0\n";
    csvs.push_back(csv);
  }
  const std::string out = (dir / "memory.csv").string();
  merge_process_runs(csvs, out);
  const CsvTable merged = CsvTable::read_file(out);
  ASSERT_EQ(merged.row_count(), 9u);
  EXPECT_EQ(merged.get_string(3, "point"), "a");
  EXPECT_EQ(merged.get_string(3, "process_run"), "1");
  EXPECT_EQ(merged.get_string(3, "repetition"), "2");  // process 1's first repetition of a
  EXPECT_EQ(merged.get_string(8, "repetition"), "2");  // process 2's b
  const CsvTable samples = CsvTable::read_file((dir / "memory.samples.csv").string());
  ASSERT_EQ(samples.row_count(), 9u);
  EXPECT_EQ(samples.get_string(4, "repetition"), "3");  // process 1's second repetition of a
  EXPECT_EQ(samples.get_string(4, "time_us"), "200");
  const CsvTable spread = CsvTable::read_file((dir / "memory.process_runs.csv").string());
  ASSERT_EQ(spread.row_count(), 2u);
  EXPECT_EQ(spread.get_string(0, "point"), "a");
  EXPECT_EQ(spread.get_double(0, "time_us_median_of_processes"), 110);
  EXPECT_NEAR(spread.get_double(0, "between_process_spread_rel"), 100.0 / 110, 1e-3);
  EXPECT_NEAR(spread.get_double(0, "within_process_spread_rel"), 0.2, 1e-9);
  EXPECT_EQ(spread.get_string(0, "process_medians_us"), "100 110 200");
}

TEST(ProcessRuns, MergeRefusesRunsWithDifferentColumns) {
  const fs::path dir = fs::path(testing::TempDir()) / "process_runs_columns";
  fs::create_directories(dir);
  std::ofstream(dir / "x.0.csv") << run_csv(1, 2);
  std::ofstream(dir / "x.1.csv") << "point,status\na,ok\n";
  EXPECT_THROW(
      merge_process_runs({(dir / "x.0.csv").string(), (dir / "x.1.csv").string()}, (dir / "x.csv").string()),
      std::runtime_error);
}

TEST(ProcessCompare, OneProcessEachIsLeftToTheSampleTests) {
  bool judged = true;
  judge({100}, {150}, &judged);
  EXPECT_FALSE(judged);
}

TEST(ProcessCompare, ARegressionMustExceedTheSpreadBetweenProcesses) {
  // Launch-level states: processes of the same build read 180-225 us.
  const std::vector<double> base = {180, 190, 200, 215, 225};
  EXPECT_EQ(judge(base, {185, 195, 205, 210, 220}).verdict, Verdict::unchanged);
  // 15% slower but inside the 22% spread between the baseline's processes: not a regression.
  auto within = judge(base, {228, 229, 230, 231, 232});
  EXPECT_EQ(within.verdict, Verdict::unchanged);
  EXPECT_TRUE(within.significant);
  EXPECT_EQ(within.test, "process-medians");
  // Every process slower, by more than the spread: a regression.
  auto slower = judge(base, {260, 265, 270, 275, 280});
  EXPECT_EQ(slower.verdict, Verdict::regression);
  EXPECT_TRUE(slower.is_failure);
  EXPECT_NEAR(*slower.ratio, 270.0 / 200, 1e-12);
  EXPECT_NE(slower.detail.find("5 vs 5 processes"), std::string::npos) << slower.detail;
  EXPECT_EQ(judge(base, {120, 125, 130, 135, 140}).verdict, Verdict::improvement);
}

TEST(ProcessCompare, TwoStatesMakeOneLaunchUnreliable) {
  // Each process lands fast (~200 us) or slow (~450 us): a single slow launch of the current
  // run beside fast baseline launches is within the baseline's own spread.
  EXPECT_EQ(judge({200, 210, 450, 460, 205}, {455}).verdict, Verdict::unchanged);
  // The same single launch against a baseline that never left the fast state: a regression.
  EXPECT_EQ(judge({200, 205, 210, 202, 207}, {455}).verdict, Verdict::regression);
}

TEST(ProcessSpread, WithoutAProcessColumnAllRowsAreOneProcess) {
  const CsvTable t = CsvTable::parse(
      "point,status,time_us_median,time_us_p10,time_us_p90\np,ok,10,9,11\np,ok,30,27,33\np,ok,20,18,22\n",
      "x");
  const ProcessSpread s = process_spread(t, all_rows(t));
  EXPECT_EQ(s.processes(), 1);
  EXPECT_EQ(s.median_us, 20);
  EXPECT_TRUE(process_spreads(t).empty());
}
