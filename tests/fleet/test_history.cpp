// The history store and its regression rule (app/history/).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <sstream>

#include "app/history/history_commands.h"
#include "app/history/history_db.h"
#include "app/history/regressions.h"

namespace gpucal::history {
namespace {

namespace fs = std::filesystem;

class History : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("gpucal_history_test_" + std::to_string(::getpid()) + ".sqlite")).string();
    fs::remove(path_);
  }
  void TearDown() override { fs::remove(path_); }
  // One run per value: node n1's gemm figure.
  void record_series(HistoryDb& db, const std::vector<double>& values, const std::string& metric = "gemm_bf16_tflops") {
    for (std::size_t i = 0; i < values.size(); ++i)
      db.record({0, "2026-01-" + std::to_string(10 + i) + "T00:00:00Z", "abc", "fleet", "c1", "/runs/" + std::to_string(i)},
                {{"n1", metric, values[i], "TFLOP/s", "ok"}, {"n1", "node_status", std::nullopt, "", "ok"}});
  }
  // One run per night: node n<i+1>'s hbm_copy_gbps figure is nights[night][i].
  void record_fleet(HistoryDb& db, const std::vector<std::vector<double>>& nights) {
    for (std::size_t night = 0; night < nights.size(); ++night) {
      std::vector<Measurement> rows;
      for (std::size_t i = 0; i < nights[night].size(); ++i)
        rows.push_back({"n" + std::to_string(i + 1), "hbm_copy_gbps", nights[night][i], "GB/s", "ok"});
      db.record({0, "2026-03-0" + std::to_string(night + 1) + "T02:00:00Z", "abc", "fleet", "c1", "/f/" + std::to_string(night)}, rows);
    }
  }
  std::string path_;
};

TEST_F(History, RecordsRunsAndSeriesInTimeOrder) {
  HistoryDb db(path_);
  record_series(db, {700, 710, 705});
  EXPECT_EQ(db.runs().size(), 3u);
  const auto s = db.series("gemm_bf16_tflops", "");
  ASSERT_EQ(s.size(), 1u);
  const auto& points = s.begin()->second;
  ASSERT_EQ(points.size(), 3u);
  EXPECT_DOUBLE_EQ(*points[1].value, 710);
  EXPECT_EQ(db.series("", "n1").size(), 2u);  // the figure and the node's status
}

TEST_F(History, RecordingTheSameRunAgainReplacesIt) {
  {
    HistoryDb db(path_);
    record_series(db, {700});
    db.record({0, "2026-01-10T00:00:00Z", "abc", "fleet", "c1", "/runs/0"}, {{"n1", "gemm_bf16_tflops", 650, "TFLOP/s", "ok"}});
  }
  HistoryDb reopened(path_);
  ASSERT_EQ(reopened.runs().size(), 1u);
  EXPECT_DOUBLE_EQ(*reopened.series("gemm_bf16_tflops", "n1").begin()->second[0].value, 650);
}

TEST_F(History, FlagsADropBeyondTheRunToRunSpreadOnly) {
  HistoryDb db(path_);
  record_series(db, {800, 802, 798, 801, 799, 700});
  auto trends = analyse(db.series("", ""), {});
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_TRUE(trends[0].regression);
  EXPECT_NEAR(trends[0].change, -0.125, 0.01);
  EXPECT_DOUBLE_EQ(trends[0].threshold, 0.05);  // the spread is far below the 5% minimum
}

TEST_F(History, ANoisyMetricNeedsALargerDrop) {
  HistoryDb db(path_);
  record_series(db, {100, 130, 80, 120, 90, 85}, "p2p_latency_us");
  const auto trends = analyse(db.series("", ""), {});
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_FALSE(trends[0].regression);  // latency fell (better); and the spread is wide
  EXPECT_GT(trends[0].threshold, 0.3);
}

TEST_F(History, ASingleNodeWithOneEarlierNightHasNoSpreadToJudgeBy) {
  HistoryDb db(path_);
  record_series(db, {800, 500});
  const auto trends = analyse(db.series("", ""), {});
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_FALSE(trends[0].regression);
  EXPECT_NE(trends[0].note.find("no fleet spread"), std::string::npos) << trends[0].note;
  RegressionOptions three;
  three.min_history = 3;
  EXPECT_NE(analyse(db.series("", ""), three)[0].note.find("history too short"), std::string::npos);
}

// The nodes' trends, without the fleet-wide shift's.
std::vector<Trend> node_trends(const std::vector<Trend>& all) {
  std::vector<Trend> out;
  for (const Trend& t : all)
    if (t.node != kFleetSubject && t.node != kFleetPairsSubject) out.push_back(t);
  return out;
}

// From the second night on: one earlier night, the spread from the fleet's change that night.
TEST_F(History, FromTheSecondNightTheFleetsSpreadJudges) {
  HistoryDb db(path_);
  const std::vector<double> night1{800, 790, 810, 805, 795}, night2{808, 783, 812, 640, 790};  // n4 -20%
  record_fleet(db, {night1, night2});
  const auto all = analyse(db.series("", ""), {});
  const auto trends = node_trends(all);
  ASSERT_EQ(trends.size(), 5u);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all.back().node, kFleetSubject);
  EXPECT_FALSE(all.back().regression);
  for (const Trend& t : trends) {
    EXPECT_TRUE(t.note.empty()) << t.node << ": " << t.note;
    EXPECT_EQ(t.regression, t.node == "n4") << t.node << " " << t.change << " vs " << t.threshold;
    EXPECT_EQ(t.basis, "1 earlier night, spread from the fleet (5 nodes)");
    EXPECT_EQ(t.spread_from, "fleet");
  }
}

// A night the whole fleet moved (a loaded host, a driver) is the night's: a node is judged against
// the fleet's shift, and the basis says the fleet moved.
TEST_F(History, AChangeTheWholeFleetSharedIsTheNights) {
  HistoryDb db(path_);
  record_fleet(db, {{100, 100, 101, 99, 100}, {70, 69, 71, 70, 50}});
  const auto all = analyse(db.series("", ""), {});
  for (const Trend& t : node_trends(all)) {
    EXPECT_EQ(t.regression, t.node == "n5") << t.node << " " << t.change << " vs " << t.threshold;
    EXPECT_EQ(t.basis, "1 earlier night, spread from the fleet (5 nodes, which moved -30%)");
  }
  // ... and the fleet's own -30% is a finding of its own subject.
  ASSERT_EQ(all.back().node, kFleetSubject);
  EXPECT_TRUE(all.back().regression);
  EXPECT_NEAR(all.back().change, -0.30, 0.01);
  EXPECT_EQ(all.back().basis, "median change of 5 nodes that night");
}

// Three earlier nights that happen to agree measure no spread (MAD 0): the old rule's 5% then
// flagged a healthy node of a noisy fleet at night 4. The fleet's spread of the change holds it.
TEST_F(History, AFewAgreeingNightsDoNotHideTheFleetsNoise) {
  HistoryDb db(path_);
  record_fleet(db, {{100, 100, 100, 100, 100}, {100, 80, 120, 90, 110}, {100, 100, 96, 118, 85}, {92, 115, 104, 80, 100}});
  const auto trends = node_trends(analyse(db.series("", ""), {}));
  ASSERT_EQ(trends.size(), 5u);
  for (const Trend& t : trends) EXPECT_FALSE(t.regression) << t.node << " " << t.change << " vs " << t.threshold;
  EXPECT_EQ(trends[0].basis, "3 earlier nights, spread from the fleet (5 nodes)");
  EXPECT_GT(trends[0].threshold, 0.08);  // n1: -8% against its own 100, 100, 100
}

// Once `window` earlier nights measure the series' own spread, that spread judges alone.
TEST_F(History, AFullWindowUsesTheSeriesOwnSpread) {
  HistoryDb db(path_);
  record_series(db, {800, 802, 798, 801, 799, 700});
  const auto trends = analyse(db.series("", ""), {});
  EXPECT_EQ(trends[0].basis, "5 earlier nights");
  EXPECT_EQ(trends[0].spread_from, "own");
}

// history show: a column per run with its date; a night without a run, and a node absent from a
// run, show as missing rather than closing up.
TEST_F(History, ShowDatesEachRunAndShowsMissingNights) {
  {
    HistoryDb db(path_);
    for (const std::string day : {"01", "02", "04", "05"}) {
      std::vector<Measurement> rows{{"n1", "hbm_copy_gbps", 3000, "GB/s", "ok"}};
      if (day != "02") rows.push_back({"n2", "hbm_copy_gbps", 2990, "GB/s", "ok"});
      db.record({0, "2026-02-" + day + "T02:00:00Z", "abc", "fleet", "c1", "/runs/" + day}, rows);
    }
  }
  std::ostringstream out;
  ShowOptions o;
  o.history = path_;
  ASSERT_EQ(run_show(o, out), 0);
  const std::string text = out.str();
  EXPECT_NE(text.find("1 night(s) without a run: 2026-02-03"), std::string::npos) << text;
  std::istringstream lines(text);
  std::string line, dates, n1, n2;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first, rest, cells;
    words >> first;
    while (words >> rest) cells += rest + " ";
    if (first == "date") dates = cells;
    if (first == "n1") n1 = cells;
    if (first == "n2") n2 = cells;
  }
  EXPECT_EQ(dates, "02-01 02-02 02-03 02-04 02-05 ") << text;
  EXPECT_EQ(n1, "3000 3000 missing 3000 3000 ") << text;
  EXPECT_EQ(n2, "2990 missing missing 2990 2990 ") << text;
}

TEST_F(History, AFileThatIsNotAHistoryIsRefused) {
  { std::ofstream(path_) << "not sqlite at all, just text that is long enough to be read as a header......"; }
  EXPECT_THROW(HistoryDb db(path_), std::invalid_argument);
  EXPECT_THROW(HistoryDb db(path_, HistoryDb::Mode::read), std::invalid_argument);
}

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// Reading never creates or alters: a misspelt path is refused and no file appears.
TEST_F(History, ReadingAPathThatDoesNotExistCreatesNothing) {
  try {
    HistoryDb db(path_, HistoryDb::Mode::read);
    ADD_FAILURE() << "opened a history that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path_));
}

// Another application's SQLite file is refused by every mode and left byte for byte.
TEST_F(History, AnotherApplicationsSqliteFileIsRefusedAndUntouched) {
  {
    HistoryDb db(path_);  // a real SQLite file, then replaced by another application's tables
  }
  fs::remove(path_);
  const std::string make = "sqlite3 " + path_ + " 'CREATE TABLE notes(id INTEGER, text TEXT); INSERT INTO notes VALUES(1, \"x\");'";
  if (std::system(make.c_str()) != 0) GTEST_SKIP() << "no sqlite3 program to make another application's file";
  const std::string before = bytes_of(path_);
  for (const auto mode : {HistoryDb::Mode::read, HistoryDb::Mode::write}) {
    try {
      HistoryDb db(path_, mode);
      ADD_FAILURE() << "opened another application's SQLite file";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("another application"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(bytes_of(path_), before);
}

// Read mode opens a real history and sees what was recorded, without writing.
TEST_F(History, ReadModeSeesTheRecordedFiguresAndNames) {
  {
    HistoryDb db(path_);
    record_series(db, {700, 710});
  }
  const std::string before = bytes_of(path_);
  HistoryDb db(path_, HistoryDb::Mode::read);
  EXPECT_EQ(db.runs().size(), 2u);
  EXPECT_EQ(db.metrics(), (std::vector<std::string>{"gemm_bf16_tflops", "node_status"}));
  EXPECT_EQ(db.nodes(), std::vector<std::string>{"n1"});
  EXPECT_EQ(bytes_of(path_), before);
}

}  // namespace
}  // namespace gpucal::history
