// Checked writes (core/output/file_io.h), numeric flag checks (core/driver/flag_checks.h), CSV records
// (core/output/csv_format.h) and the calibration.json schema check against what gpucal fit writes.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/fit/calibration_build.h"
#include "app/common/calibration_schema.h"
#include "core/output/csv_format.h"
#include "core/output/file_io.h"
#include "core/output/run_files.h"
#include "core/driver/flag_checks.h"
#include "app/common/results_dir.h"
#include "tests/calibration/synthetic_results.h"

namespace fs = std::filesystem;

namespace gpucal {
namespace {

std::string temp_dir() {
  const fs::path dir = fs::path(::testing::TempDir()) / ("fileio_" + std::to_string(::getpid()) + "_" +
                                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AppendFile, WritesWholeAppendsAndTruncatesOnOpen) {
  const std::string path = temp_dir() + "/a.csv";
  std::ofstream(path) << "old contents that must go\n";
  {
    AppendFile f(path, AppendFile::Lock::exclusive);
    f.append("h\n");
    f.append("1\n2\n");
    f.close();
  }
  EXPECT_EQ(slurp(path), "h\n1\n2\n");
}

TEST(AppendFile, SecondExclusiveOpenIsRefusedAndLeavesTheFileAlone) {
  const std::string path = temp_dir() + "/a.csv";
  AppendFile first(path, AppendFile::Lock::exclusive);
  first.append("row 1\n");
  try {
    AppendFile second(path, AppendFile::Lock::exclusive);
    FAIL() << "a second writer was let in";
  } catch (const OpenError& e) {
    EXPECT_NE(std::string(e.what()).find("is being written by another run"), std::string::npos) << e.what();
  }
  first.append("row 2\n");
  first.close();
  EXPECT_EQ(slurp(path), "row 1\nrow 2\n");  // not truncated by the refused open
  AppendFile after(path, AppendFile::Lock::exclusive);  // free once the first is closed
}

TEST(AppendFile, OpenErrorsNameThePath) {
  EXPECT_THROW(AppendFile("/nonexistent/dir/x.csv", AppendFile::Lock::none), OpenError);
  EXPECT_THROW(AppendFile(temp_dir(), AppendFile::Lock::none), OpenError);  // a directory
}

TEST(AppendFile, DiskFullIsAWriteErrorAndLeavesWholeAppends) {
  AppendFile full("/dev/full", AppendFile::Lock::none);
  try {
    full.append("x\n");
    FAIL() << "write to /dev/full succeeded";
  } catch (const WriteError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write '/dev/full': No space left on device"), std::string::npos)
        << e.what();
  }
  // A write cut short by the file size limit (EFBIG after a partial write) is cut back.
  const std::string path = temp_dir() + "/limited.csv";
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);
  {
    AppendFile f(path, AppendFile::Lock::none);
    f.append("header\n");
    struct rlimit lim = old;
    lim.rlim_cur = 20;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
    f.append("row 1\n");                                      // 13 bytes: fits
    EXPECT_THROW(f.append("a row that crosses the limit\n"), WriteError);  // partly written, then EFBIG
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
    f.append("row 3\n");  // continues after the last whole append
  }
  std::signal(SIGXFSZ, previous);
  EXPECT_EQ(slurp(path), "header\nrow 1\nrow 3\n");
}

// Runs `body` with writes past `bytes` failing (EFBIG), as on a full disk.
template <class Body>
void with_file_size_limit(rlim_t bytes, Body body) {
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = bytes;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
  body();
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, previous);
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AppendFile, StagedFileGrowsBesideThePreviousOneAndReplacesItWhenClosed) {
  const std::string dir = temp_dir(), path = dir + "/a.csv";
  std::ofstream(path) << "the previous run\n";
  AppendFile f(path, AppendFile::Lock::exclusive, AppendFile::Staging::partial);
  EXPECT_EQ(f.written_path(), path + ".partial");
  f.append("h\n1\n");
  EXPECT_EQ(slurp(path), "the previous run\n");  // untouched while the run goes
  EXPECT_EQ(slurp(path + ".partial"), "h\n1\n");  // what a kill would leave
  f.close();
  EXPECT_EQ(slurp(path), "h\n1\n");
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"a.csv"});
}

TEST(AppendFile, StagedFileThatFailsLeavesThePreviousOneByteForByte) {
  const std::string dir = temp_dir(), path = dir + "/a.csv";
  std::ofstream(path) << "the previous run\n";
  with_file_size_limit(12, [&] {
    AppendFile f(path, AppendFile::Lock::none, AppendFile::Staging::partial);
    f.append("header\n");
    EXPECT_THROW(f.append("a row past the limit\n"), WriteError);
    EXPECT_EQ(slurp(path + ".partial"), "header\n");  // whole appends only
    f.discard();
  });
  EXPECT_EQ(slurp(path), "the previous run\n");
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"a.csv"});
  try {
    AppendFile d(dir, AppendFile::Lock::none, AppendFile::Staging::partial);  // not "dir.partial"
    FAIL() << "a directory was accepted";
  } catch (const OpenError& e) {
    EXPECT_NE(std::string(e.what()).find("Is a directory"), std::string::npos) << e.what();
  }
  AppendFile full("/dev/full", AppendFile::Lock::none, AppendFile::Staging::partial);
  EXPECT_EQ(full.written_path(), "/dev/full");  // devices are written in place
}

TEST(RunFiles, CommitRenamesEveryFileIntoPlace) {
  const std::string dir = temp_dir(), csv = dir + "/g.csv";
  {
    RunFiles files(csv, {"m"}, "{\"start\": 1}\n");
    EXPECT_EQ(slurp(dir + "/g.json.partial"), "{\"start\": 1}\n");
    Row row;
    row.set("point", "p").set("repetition", int64_t{0}).set("status", "ok");
    const std::vector<double> samples{1e-6, 2e-6};
    files.write(row, &samples);
    files.commit("{\"end\": 1}\n", {{".best.csv", "best\n"}});
  }
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"g.best.csv", "g.csv", "g.json", "g.samples.csv"}));
  EXPECT_EQ(slurp(dir + "/g.json"), "{\"end\": 1}\n");
  EXPECT_EQ(slurp(dir + "/g.best.csv"), "best\n");
  EXPECT_EQ(slurp(dir + "/g.samples.csv"), "point,sample,time_us,repetition\np,0,1,0\np,1,2,0\n");
}

TEST(RunFiles, AnUnfinishedRunKeepsItsRowsPartialAndNoEmptyFile) {
  const std::string dir = temp_dir(), csv = dir + "/g.csv";
  std::ofstream(csv) << "earlier good rows\n";
  {
    RunFiles files(csv, {}, "{}\n");  // no row: nothing worth keeping
    EXPECT_NE(files.leftover().find("no row was written"), std::string::npos);
  }
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"g.csv"});
  {
    RunFiles files(csv, {}, "{}\n");
    Row row;
    row.set("point", "p").set("status", "ok");
    files.write(row, nullptr);
    EXPECT_NE(files.leftover().find("the 1 row(s) written before it are whole in '" + csv + ".partial'"),
              std::string::npos)
        << files.leftover();
  }
  EXPECT_EQ(files_in(dir), (std::vector<std::string>{"g.csv", "g.csv.partial", "g.json.partial",
                                                     "g.samples.csv.partial"}));
  EXPECT_EQ(slurp(csv), "earlier good rows\n");
  // A disk too full for the header: an error, the earlier file as it was, and no empty file.
  for (const char* name : {"g.csv.partial", "g.json.partial", "g.samples.csv.partial"}) fs::remove(dir + "/" + name);
  with_file_size_limit(8, [&] { EXPECT_THROW(RunFiles(csv, {}, "{}\n"), WriteError); });
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"g.csv"});
  EXPECT_EQ(slurp(csv), "earlier good rows\n");
}

TEST(WriteFileAtomic, ReplacesWholeOrNotAtAll) {
  const std::string dir = temp_dir(), path = dir + "/side.json";
  write_file_atomic(path, "{\"v\": 1}\n");
  EXPECT_EQ(slurp(path), "{\"v\": 1}\n");
  write_file_atomic(path, "{\"v\": 2}\n");
  EXPECT_EQ(slurp(path), "{\"v\": 2}\n");
  // A failing write keeps the previous file and leaves no temporary behind.
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = old;
  lim.rlim_cur = 4;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
  EXPECT_THROW(write_file_atomic(path, "{\"v\": 3, \"much\": \"longer\"}\n"), WriteError);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, previous);
  EXPECT_EQ(slurp(path), "{\"v\": 2}\n");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1);
  EXPECT_THROW(write_file_atomic("/dev/full", "x"), WriteError);  // devices are written in place
  EXPECT_THROW(write_file_atomic("/nonexistent/dir/x.json", "x"), OpenError);
}

TEST(FlagChecks, OneRuleForEveryNumber) {
  const NumberBounds positive{.min = 0, .max = 86400, .min_exclusive = true};
  EXPECT_EQ(check_number_text("0.5", false, positive), "");
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "0", "-1", "abc", "", " 1", "1e999", "5s", "86401"})
    EXPECT_NE(check_number_text(bad, false, positive), "") << bad;
  const NumberBounds count{.min = 1, .max = 2147483647};
  EXPECT_EQ(check_number_text("12", true, count), "");
  for (const char* bad : {"0", "1.5", "4294967297", "99999999999999999999", "0x10", "1e3", "-3"})
    EXPECT_NE(check_number_text(bad, true, count), "") << bad;
  EXPECT_NE(check_number_text("nan", false, {}).find("expected a finite number, got 'nan'"), std::string::npos);
}

TEST(FlagChecks, OptionWithoutValueIsNamed) {
  CLI::App app;
  std::string m;
  bool quiet = false;
  app.add_option("--m", m);
  app.add_flag("--quiet", quiet);
  const char* missing[] = {"prog", "--m", "--backend", "host"};
  EXPECT_EQ(missing_option_value(app, 4, missing), "--m: expected a value");
  const char* last[] = {"prog", "--quiet", "--m"};
  EXPECT_EQ(missing_option_value(app, 3, last), "--m: expected a value");
  const char* fine[] = {"prog", "--m", "64", "--quiet"};
  EXPECT_EQ(missing_option_value(app, 4, fine), "");
}

TEST(CsvRecord, LoneEmptyCellIsQuoted) {
  EXPECT_EQ(csv_record({""}), "\"\"\n");
  EXPECT_EQ(csv_record({"", ""}), ",\n");
  EXPECT_EQ(csv_record({"a,b", "c"}), "\"a,b\",c\n");
}

// What gpucal fit writes passes the schema check that gpucal export applies on read.
TEST(CalibrationSchema, FitOutputIsValid) {
  const std::string dir = temp_dir() + "/results";
  calibration::testing::write_synthetic_results(dir, {});
  const nlohmann::json doc = calibration::build_calibration(calibration::load_results_dir(dir));
  EXPECT_NO_THROW(calibration::validate_calibration(doc, "fit"));
  nlohmann::json broken = doc;
  broken["communication"]["collectives"][0]["points"] = nlohmann::json::array();
  try {
    calibration::validate_calibration(broken, "c.json");
    FAIL() << "empty points accepted";
  } catch (const calibration::SchemaError& e) {
    EXPECT_EQ(std::string(e.what()),
              "c.json: $.communication.collectives[0].points: expected a non-empty array, got []");
  }
}


// A bench whose ok rows were all left out as suspect says so where its figures are missing.
TEST(SuspectLeftOut, TheRefusalSaysWhyTheRowsAreMissing) {
  nlohmann::json c = {{"sources", {{"gemm", {{"rows", 16}, {"ok_rows", 0}, {"suspect_left_out", 8}}},
                                   {"memory", {{"rows", 4}, {"ok_rows", 4}, {"suspect_left_out", 0}}}}}};
  const std::string why = calibration::left_out_as_suspect(c, "gemm");
  EXPECT_NE(why.find("8 ok gemm row(s) were left out"), std::string::npos) << why;
  EXPECT_NE(why.find("--allow-suspect"), std::string::npos) << why;
  EXPECT_EQ(calibration::left_out_as_suspect(c, "memory"), "");
  EXPECT_EQ(calibration::left_out_as_suspect(c, "attention"), "");  // not in the sources
  c["sources"]["gemm"]["suspect_left_out"] = "eight";              // a wrong type says nothing
  EXPECT_EQ(calibration::left_out_as_suspect(c, "gemm"), "");
  EXPECT_EQ(calibration::left_out_as_suspect(nlohmann::json::array(), "gemm"), "");
}

}  // namespace
}  // namespace gpucal
