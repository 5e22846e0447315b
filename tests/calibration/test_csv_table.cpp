#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "app/common/csv_table.h"
#include "core/output/csv_format.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

TEST(CsvTable, ReadsQuotedFieldsCommasEscapedQuotesAndNewlines) {
  const CsvTable t = CsvTable::parse(
      "point,detail,time_us_median\r\n"
      "\"gemm/a,b\",\"he said \"\"hi\"\"\",1.5\r\n"
      "p2,\"two\nlines\",2e3\n",
      "mem.csv");
  ASSERT_EQ(t.row_count(), 2u);
  EXPECT_EQ(t.get_string(0, "point"), "gemm/a,b");
  EXPECT_EQ(t.get_string(0, "detail"), "he said \"hi\"");
  EXPECT_DOUBLE_EQ(t.get_double(0, "time_us_median"), 1.5);
  EXPECT_EQ(t.get_string(1, "detail"), "two\nlines");
  EXPECT_DOUBLE_EQ(t.get_double(1, "time_us_median"), 2000.0);
  EXPECT_EQ(t.line_of(1), 3u);
}

TEST(CsvTable, EmptyFieldsAndOptionalGetters) {
  const CsvTable t = CsvTable::parse("a,b,c\n1,,\"\"\n", "x.csv");
  EXPECT_EQ(t.get_int(0, "a"), 1);
  EXPECT_FALSE(t.get_optional_double(0, "b").has_value());
  EXPECT_FALSE(t.get_optional_double(0, "c").has_value());
  EXPECT_FALSE(t.get_optional_double(0, "absent").has_value());
  EXPECT_EQ(t.get_string_or(0, "absent", "dflt"), "dflt");
  EXPECT_THROW(t.get_double(0, "b"), CsvError);
}

TEST(CsvTable, BlankLinesIgnored) {
  const CsvTable t = CsvTable::parse("a,b\n\n1,2\n\n3,4\n", "x.csv");
  ASSERT_EQ(t.row_count(), 2u);
  EXPECT_EQ(t.get_int(1, "b"), 4);
  EXPECT_TRUE(t.warnings().empty());
}

// A run killed mid-line leaves a last line without its line end: dropped with a warning,
// even when it has every field (its last number may be cut: 12.3 of 12.345).
TEST(CsvTable, TornLastLineDroppedWithWarning) {
  for (const std::string& torn : {"3,12.3", "3,", "3", "\"p,1", "\"p,1\",4"}) {
    const CsvTable t = CsvTable::parse("a,b\n1,2\n" + torn, "x.csv");
    ASSERT_EQ(t.row_count(), 1u) << torn;
    ASSERT_EQ(t.warnings().size(), 1u) << torn;
    EXPECT_NE(t.warnings()[0].find("x.csv:3: last line has no line end"), std::string::npos) << t.warnings()[0];
  }
  const CsvTable header_only = CsvTable::parse("a,b", "h.csv");  // a header needs no line end
  EXPECT_EQ(header_only.columns().size(), 2u);
  EXPECT_TRUE(header_only.warnings().empty());
}

// The writer's records read back as written, the one-column empty record included.
TEST(CsvTable, WriterRecordsRoundTrip) {
  const std::vector<std::vector<std::string>> records = {{""}, {"a,b"}, {"\"q\""}, {"x\ny"}};
  for (const auto& cells : records) {
    const CsvTable t = CsvTable::parse(csv_record({"h"}) + csv_record(cells), "r.csv");
    ASSERT_EQ(t.row_count(), 1u) << cells[0];
    EXPECT_EQ(t.get_string(0, "h"), cells[0]);
  }
}

// The message must name file, line and column so the user can fix the file.
void expect_error(const std::string& text, const std::string& fragment,
                  const std::function<void(const CsvTable&)>& use = nullptr) {
  try {
    const CsvTable t = CsvTable::parse(text, "bad.csv");
    if (use) use(t);
    FAIL() << "no CsvError for: " << text;
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(CsvTable, ErrorsSayWhereAndWhat) {
  expect_error("", "empty file");
  expect_error("a,b\n1,2,3\n", "bad.csv:2: 3 fields, header has 2");
  expect_error("a,b\n\"open,2\n", "bad.csv:2: unterminated quoted field");
  expect_error("a,a\n1,2\n", "duplicate column 'a'");
  expect_error("a,b\n1,x\"y\n", "quote inside an unquoted field");
  expect_error("a,b\n\"1\"x,2\n", "text after a closing quote");
  expect_error("a,b\n1,abc\n", "bad.csv:2: column 'b': 'abc' is not a number",
               [](const CsvTable& t) { t.get_double(0, "b"); });
  expect_error("a,b\n1,2.5\n", "'2.5' is not an integer", [](const CsvTable& t) { t.get_int(0, "b"); });
  expect_error("a,b\n1,2\n", "no column 'm'", [](const CsvTable& t) { t.get_double(0, "m"); });
  expect_error("a,b\n1,2\n", "missing column(s) m, k", [](const CsvTable& t) { t.require_columns({"a", "m", "k"}); });
  EXPECT_THROW(CsvTable::read_file("/nonexistent/gpucal.csv"), CsvError);
}

TEST(CsvTable, ReadsSamplesFileGroupedByPoint) {
  const std::string dir = testing::fresh_temp_dir();
  std::ofstream(dir + "/x.samples.csv") << "point,sample,time_us\n\"p,1\",0,1.0\n\"p,1\",1,2.0\np2,0,5\n";
  const auto samples = read_samples_file(dir + "/x.samples.csv");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples.at("p,1"), (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(samples.at("p2"), (std::vector<double>{5.0}));
}

TEST(CsvTable, QuoteRoundTrips) {
  const std::string field = "a,\"b\"\nc";
  const CsvTable t = CsvTable::parse("x\n" + csv_escape(field) + "\n", "q.csv");
  EXPECT_EQ(t.get_string(0, "x"), field);
  EXPECT_EQ(csv_escape("plain"), "plain");
}

}  // namespace
}  // namespace gpucal::calibration
