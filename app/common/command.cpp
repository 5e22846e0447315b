#include "app/common/command.h"

#include <CLI/CLI.hpp>

#include "app/common/results_dir.h"
#include "core/formulas/collectives.h"
#include "core/output/file_io.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

std::string examples_footer(std::initializer_list<std::pair<const char*, const char*>> examples) {
  std::string out = "\nExamples:\n";
  for (const auto& [command, what] : examples) out += std::string("  ") + command + "\n      " + what + "\n";
  return out;
}

ResultsDir load_results(const std::string& dir, bool allow_suspect) {
  ResultsDir results = load_results_dir(dir, allow_suspect);
  for (const auto& w : results.warnings) write_stderr_line("gpucal: warning: " + w);
  return results;
}

void add_allow_suspect_flag(CLI::App& cmd, bool& allow_suspect) {
  cmd.add_flag("--allow-suspect", allow_suspect,
               "also use ok rows whose timings are suspect (preempted on a loaded machine: their suspect column); "
               "by default they are left out");
}

CLI::Validator collective_check() {
  const std::vector<std::string> names = collective_names();
  std::string choices;
  for (const auto& n : names) choices += (choices.empty() ? "" : ",") + n;
  return CLI::Validator(
      [names](std::string& word) {
        return std::find(names.begin(), names.end(), word) != names.end()
                   ? std::string()
                   : registry::unknown_message("collective", word, names);
      },
      "{" + choices + "}");
}

void add_form_option(CLI::App& cmd, std::string& form) {
  cmd.add_option("--as", form, "print the result as aligned text, a GitHub markdown table or JSON")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->type_name("text|markdown|json")
      ->capture_default_str();
}

}  // namespace gpucal::calibration
