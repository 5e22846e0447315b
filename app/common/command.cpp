#include "app/common/command.h"

#include <CLI/CLI.hpp>

#include "app/common/results_dir.h"
#include "core/output/file_io.h"

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

}  // namespace gpucal::calibration
