// `gpucal list`: every registry's every row, in plain text, markdown and JSON, the summary's counts,
// and a misspelt registry as one line and exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/export/export_registry.h"
#include "app/import/import_formats.h"
#include "app/run/suites.h"
#include "core/formulas/collectives.h"
#include "core/formulas/kernel_table.h"
#include "core/model/model_spec.h"
#include "core/registry/registry.h"
#include "tests/calibration/import_test_util.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

int gpucal_list(const std::string& args, std::string& output, const std::string& dir) {
  return testing::run_gpucal("list " + args, output, dir);
}

// Each registry's rows by name, from the registries themselves (the verbs from gpucal --help).
std::map<std::string, std::vector<std::string>> expected_rows(const std::string& dir) {
  std::string help;
  EXPECT_EQ(testing::run_gpucal("--help", help, dir), 0);
  std::vector<std::string> verbs;
  const std::string listing = help.substr(help.find("Subcommands:"));
  for (const auto& line : testing::text_lines(listing.substr(0, listing.find("Examples:"))))
    if (line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ')
      verbs.push_back(line.substr(2, line.find(' ', 2) - 2));
  return {{"verbs", verbs},
          {"collectives", registry::names(collectives())},
          {"export-targets", registry::names(export_targets())},
          {"import-formats", registry::names(import_formats())},
          {"suites", registry::names(suites())},
          {"presets", registry::names(model::presets())},
          {"memory-kernels", registry::names(memory::kernel_table())}};
}

TEST(GpucalCli, ListShowsEveryRowOfEveryRegistry) {
  const std::string dir = testing::fresh_temp_dir();
  const auto expected = expected_rows(dir);
  ASSERT_GE(expected.at("verbs").size(), 10u);
  EXPECT_NE(std::find(expected.at("verbs").begin(), expected.at("verbs").end(), "list"),
            expected.at("verbs").end());
  std::string out;
  ASSERT_EQ(gpucal_list("", out, dir), 0) << out;
  const auto summary = testing::text_lines(out);
  // The header, a line per registry above, and the flags' table (tests/docs/check_flags.py).
  ASSERT_EQ(summary.size(), 1 + expected.size() + 1) << out;
  for (const auto& [what, names] : expected) {
    // The summary's count, then the rows in registry order, plain and markdown.
    const auto line = std::find_if(summary.begin(), summary.end(),
                                   [&](const std::string& l) { return l.rfind(what + " ", 0) == 0; });
    ASSERT_NE(line, summary.end()) << what << " is not in the summary:\n" << out;
    std::istringstream words(*line);
    std::string name, count;
    words >> name >> count;
    EXPECT_EQ(count, std::to_string(names.size())) << *line;
    ASSERT_EQ(gpucal_list(what, out, dir), 0) << out;
    const auto plain = testing::text_lines(out);
    ASSERT_EQ(plain.size(), 1 + names.size()) << out;
    for (size_t i = 0; i < names.size(); ++i)
      EXPECT_EQ(plain[1 + i].rfind(names[i] + " ", 0), 0u) << plain[1 + i];
    ASSERT_EQ(gpucal_list(what + " --as markdown", out, dir), 0) << out;
    const auto markdown = testing::text_lines(out);
    ASSERT_EQ(markdown.size(), 2 + names.size()) << out;
    for (size_t i = 0; i < names.size(); ++i)
      EXPECT_EQ(markdown[2 + i].rfind("| `" + names[i] + "` |", 0), 0u) << markdown[2 + i];
    ASSERT_EQ(gpucal_list(what + " --as json", out, dir), 0) << out;
    const auto rows = nlohmann::ordered_json::parse(out);
    ASSERT_EQ(rows.size(), names.size()) << out;
    for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(rows[i].begin().value(), names[i]) << rows[i].dump();
  }
  ASSERT_EQ(gpucal_list("collectives", out, dir), 0);
  EXPECT_NE(out.find("\nallreduce "), std::string::npos) << out;
  EXPECT_NE(out.find("2(n-1)/n"), std::string::npos) << out;
}

TEST(GpucalCli, ListOfAMisspeltRegistryIsOneLineAndExitTwo) {
  const std::string dir = testing::fresh_temp_dir();
  std::string out;
  EXPECT_EQ(gpucal_list("colectives", out, dir), 2);
  EXPECT_EQ(
      out.rfind("gpucal: error: unknown registry 'colectives' (did you mean 'collectives'? choices: verbs, ",
                0),
      0u)
      << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_EQ(gpucal_list("collectives extra", out, dir), 2);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

}  // namespace
}  // namespace gpucal::calibration
