// Inputs read strictly: JSON with a repeated key (core/output/strict_json.h), and the terminal
// kept free of Google Benchmark's context block (core/driver/gbench_context.h).
#include <gtest/gtest.h>

#include "core/driver/gbench_context.h"
#include "core/output/strict_json.h"

namespace gpucal {
namespace {

TEST(StrictJson, ARepeatedKeyIsRefusedWithItsPath) {
  EXPECT_EQ(parse_json_unique_keys(R"({"a": 1, "b": {"a": 2}})")["b"]["a"], 2);  // one key per object
  auto refused = [](const std::string& text) {
    try {
      parse_json_unique_keys(text);
    } catch (const DuplicateKeyError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused(R"({"layers": 32, "layers": 80})"), "$: key 'layers' appears twice");
  EXPECT_EQ(refused(R"({"config": {"devices": [{"rank": 0}, {"rank": 1, "rank": 2}]}})"),
            "$.config.devices[]: key 'rank' appears twice");
  EXPECT_THROW(parse_json_unique_keys("{\"a\": "), nlohmann::json::parse_error);
}

TEST(GbenchContext, QuietShowsNoneOfTheBlockAndNeverTheDebugWarning) {
  const std::string block =
      "2026-11-25T18:35:55+00:00\n"
      "Running ./bench_gemm\n"
      "Run on (2 X 2300 MHz CPU s)\n"
      "CPU Caches:\n"
      "  L1 Data 48 KiB (x2)\n"
      "Load Average: 10.47, 19.64, 15.85\n"
      "***WARNING*** Library was built as DEBUG. Timings may be affected.\n";
  const std::string other = "bench_gemm: warning: something of our own\n";
  EXPECT_EQ(shown_gbench_context(block + other, /*quiet=*/true), other);
  const std::string shown = shown_gbench_context(block + other, /*quiet=*/false);
  EXPECT_EQ(shown.find("Library was built as DEBUG"), std::string::npos);
  EXPECT_NE(shown.find("Run on (2 X 2300 MHz CPU s)"), std::string::npos);
  EXPECT_NE(shown.find(other), std::string::npos);
  EXPECT_FALSE(is_gbench_context_line("bench_gemm: error: cannot write 'x.csv'"));
}

}  // namespace
}  // namespace gpucal
