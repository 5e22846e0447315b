#include <gtest/gtest.h>

#include <fstream>

#include "harness/errors.h"
#include "harness/sweep.h"

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
  auto rows = read_points_file(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1].first, "n");
  EXPECT_EQ(rows[0][1].second, "128");
  {
    std::ofstream f(path);
    f << "m,n,k\n1,2\n";
  }
  EXPECT_THROW(read_points_file(path), UsageError);
  EXPECT_THROW(read_points_file(path + ".missing"), UsageError);
}
