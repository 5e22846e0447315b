// The tables `gpucal list` and the benches' --list-impls print (core/registry/listing.h): plain
// columns aligned, markdown cells escaped, and every implementation row of the three bench
// registries in its bench's table.
#include <gtest/gtest.h>

#include <string>

#include "bench_attention/attention_impls.h"
#include "bench_gemm/gemm_impls.h"
#include "bench_memory/memory_impls.h"
#include "core/registry/listing.h"
#include "tests/calibration/test_util.h"

namespace gpucal {
namespace {

using calibration::testing::text_lines;

TEST(Listing, PlainColumnsLineUp) {
  const registry::Listing t{.columns = {"name", "help"}, .rows = {{"a", "first"}, {"longer", "second"}}};
  EXPECT_EQ(registry::plain_table(t), "name    help\na       first\nlonger  second\n");
}

TEST(Listing, MarkdownEscapesWhatWouldRenderOtherwise) {
  const registry::Listing t{.columns = {"name", "formula", "help"},
                            .rows = {{"x", "a*b | c", "y = q*c <tag> a|b"}},
                            .code_columns = {1}};
  EXPECT_EQ(
      registry::markdown_table(t),
      "| name | formula | help |\n| --- | --- | --- |\n| `x` | `a*b \\| c` | y = q\\*c \\<tag> a\\|b |\n");
}

// Every row of a bench's implementation registry is in its --list-impls table, plain and markdown;
// plain text names each row this build lacks again with the reason, markdown what a build needs.
template <class Table>
void expect_every_row(const Table& table, std::string (*listing)(bool)) {
  const auto plain = text_lines(listing(false));
  const auto markdown = text_lines(listing(true));
  size_t lacking = 0;
  for (const auto& row : table) lacking += row.missing.empty() ? 0 : 1;
  EXPECT_EQ(plain.size(), 1 + table.size() + (lacking ? 2 + lacking : 0)) << listing(false);
  EXPECT_EQ(markdown.size(), 2 + table.size()) << listing(true);
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string name(table[i].name);
    EXPECT_EQ(plain[1 + i].rfind(name + " ", 0), 0u) << plain[1 + i];
    EXPECT_EQ(markdown[2 + i].rfind("| `" + name + "` |", 0), 0u) << markdown[2 + i];
    const std::string needs = table[i].needs.empty() ? "always" : std::string(table[i].needs);
    EXPECT_NE(markdown[2 + i].find("| " + needs + " |"), std::string::npos) << markdown[2 + i];
  }
}

TEST(Listing, BenchImplementationTables) {
  expect_every_row(gemm::gemm_impls(), gemm::gemm_impls_table);
  expect_every_row(attention::attention_impls(), attention::attention_impls_table);
  expect_every_row(memory::memory_impls(), memory::memory_impls_table);
}

}  // namespace
}  // namespace gpucal
