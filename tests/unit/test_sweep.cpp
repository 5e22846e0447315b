#include <gtest/gtest.h>

#include <fstream>

#include "core/errors.h"
#include "core/driver/sweep.h"

using namespace gpucal;
using V = std::vector<int64_t>;

TEST(Sweep, ValuesListsAndSuffixes) {
  EXPECT_EQ(parse_axis("1024", "m"), V({1024}));
  EXPECT_EQ(parse_axis("1024,4096", "m"), V({1024, 4096}));
  EXPECT_EQ(parse_axis("4K,1M,2G", "sizes"), V({4096, 1 << 20, int64_t{2} << 30}));
  EXPECT_EQ(parse_size("3Ki", "x"), 3072);
}

TEST(Sweep, GeometricRanges) {
  EXPECT_EQ(parse_axis("64:1024:x2", "m"), V({64, 128, 256, 512, 1024}));
  EXPECT_EQ(parse_axis("8:100:x4", "s"), V({8, 32}));  // end not on the step: stops below it
  EXPECT_EQ(parse_axis("8:4G:x2", "s").size(), 30u);
  EXPECT_EQ(parse_axis("8:4G:x2", "s").back(), int64_t{4} << 30);
}

TEST(Sweep, ArithmeticRangesAndMixtures) {
  EXPECT_EQ(parse_axis("256:1024:+256", "n"), V({256, 512, 768, 1024}));
  EXPECT_EQ(parse_axis("1M:4M:+1M", "s"), V({1 << 20, 2 << 20, 3 << 20, 4 << 20}));
  EXPECT_EQ(parse_axis("1,64:256:x2", "n"), V({1, 64, 128, 256}));
}

TEST(Sweep, MalformedInputNamesAxisAndItem) {
  for (const char* bad : {"", "abc", "64:16:x2", "64:128", "64:128:x1", "64:128:*2", "0:8:x2", "1,,2", "5Q",
                          "64:128:+0", "-5", "1:2:3:4", "99999999999999999"}) {
    try {
      parse_axis(bad, "m");
      FAIL() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--m"), std::string::npos) << e.what();
    }
  }
}

TEST(Sweep, WordLists) {
  EXPECT_EQ(parse_word_list("NN,TT", "layout", {"NN", "NT", "TN", "TT"}), (std::vector<std::string>{"NN", "TT"}));
  EXPECT_THROW(parse_word_list("NX", "layout", {"NN", "NT"}), UsageError);
  EXPECT_THROW(parse_word_list("NN,", "layout"), UsageError);
  EXPECT_THROW(parse_word_list(",NN", "layout"), UsageError);
  EXPECT_THROW(parse_word_list("NN,NN", "layout"), UsageError);  // the same point twice
}

// Bounds and duplicates: one path for every numeric list.
TEST(Sweep, BoundsAndDuplicates) {
  EXPECT_EQ(parse_axis("1,2", "kv-heads", {.min = 1, .max = 8}), V({1, 2}));
  for (const char* bad : {"0", "9", "0:4:+1", "4:16:x2", "2,1:4:x2"}) {
    try {
      parse_axis(bad, "kv-heads", {.min = 1, .max = 8});
      FAIL() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--kv-heads"), std::string::npos) << e.what();
    }
  }
  // 4G does not fit a rank count: an error, not a wrapped 0.
  EXPECT_THROW(parse_size("4G", "ranks", {.min = 1, .max = 2147483647}), UsageError);
}

TEST(Sweep, FormatSize) {
  EXPECT_EQ(format_size(4096), "4K");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(int64_t{3} << 30), "3G");
  EXPECT_EQ(format_size(0), "0");
}

TEST(Sweep, PointsFile) {
  const std::string path = testing::TempDir() + "/shapes.csv";
  {
    std::ofstream f(path);
    f << "# comment\nm,n,k\n64, 128, 256\n\n32,32,32\n";
  }
  const PointsColumns cols{{"m", "n", "k", "batch"}, {"m", "n", "k"}};
  auto rows = read_points_file(path, cols, "--shapes");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1].first, "n");
  EXPECT_EQ(rows[0][1].second, "128");
  auto expect_error = [&](const std::string& text, const std::string& fragment) {
    try {
      parse_points_text(text, "s.csv", cols, "--shapes");
      FAIL() << "accepted '" << text << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error("m,n,k\n1,2\n", "s.csv:2: expected 3 cells, got 2");
  expect_error("m,n,k\n", "no data rows");
  expect_error("", "no header row");
  expect_error("m,n,k,x\n1,2,3,4\n", "unknown column 'x'");
  expect_error("m,n,k,m\n1,2,3,4\n", "column 'm' appears twice");
  expect_error("m,n\n1,2\n", "lacks column 'k'");
  expect_error("m,n,k\n1,,3\n", "column 'n' is empty");
  expect_error("\x7f\x45LF\x01\x02\n", "unknown column");
  EXPECT_THROW(read_points_file(path + ".missing", cols, "--shapes"), UsageError);
}
