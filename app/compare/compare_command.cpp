#include "app/compare/compare_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <utility>

#include "app/common/calibration_json.h"
#include "app/common/output_guard.h"
#include "app/common/results_dir.h"
#include "app/compare/compare.h"
#include "app/compare/compare_report.h"
#include "core/driver/flag_checks.h"
#include "core/output/file_io.h"

namespace gpucal::calibration {

CLI::App* CompareCommand::add_to(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "flag regressions of CURRENT against BASELINE per point");
  cmd->add_option("BASELINE_DIR", baseline_, "baseline results folder")->required();
  cmd->add_option("CURRENT_DIR", current_, "current results folder")->required();
  add_number(*cmd, "--threshold", threshold_, "relative change of the median time that matters", {.min = 0, .max = 1e6})
      ->capture_default_str();
  cmd->add_option("--markdown", markdown_, "write a Markdown report")->type_name("FILE");
  cmd->add_option("--junit", junit_, "write JUnit XML (one testcase per point)")->type_name("FILE");
  cmd->add_option("--json", json_, "write the comparison as JSON (for plots/plot_compare.py)")->type_name("FILE");
  cmd->footer(examples_footer({
      {"gpucal compare nightly/last-week nightly/today --junit regressions.xml",
       "every point slower by more than 5% (and significant) fails; exit 1 on a regression"},
      {"gpucal compare base/ new/ --threshold 0.02 --markdown report.md", "a stricter threshold, a Markdown report"},
  }));
  return cmd;
}

int CompareCommand::run() {
  for (const auto& [flag, path] : {std::pair{"--markdown", markdown_}, {"--junit", junit_}, {"--json", json_}})
    refuse_output_over_inputs(flag, path, {baseline_, current_}, /*reads_calibration_json=*/false);
  refuse_shared_outputs({{"--markdown", markdown_}, {"--junit", junit_}, {"--json", json_}});
  CompareOptions options;
  options.threshold = threshold_;
  const ResultsDir baseline_results = load_results(baseline_);  // baseline errors reported first
  const ResultsDir current_results = load_results(current_);
  const CompareResult result = compare_runs(baseline_results, current_results, options);
  print_compare_console(result, std::cout);
  if (!markdown_.empty()) write_compare_markdown(result, markdown_);
  if (!junit_.empty()) write_compare_junit(result, junit_);
  if (!json_.empty()) write_json_file(compare_to_json(result), json_);
  if (!result.nothing_compared().empty()) gpucal::write_stderr_line("gpucal: error: " + result.nothing_compared());
  return result.failures() > 0 || !result.nothing_compared().empty() ? 1 : 0;
}

}  // namespace gpucal::calibration
