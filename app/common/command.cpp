#include "app/common/command.h"

#include "app/common/results_dir.h"
#include "core/output/file_io.h"

namespace gpucal::calibration {

std::string examples_footer(std::initializer_list<std::pair<const char*, const char*>> examples) {
  std::string out = "\nExamples:\n";
  for (const auto& [command, what] : examples) out += std::string("  ") + command + "\n      " + what + "\n";
  return out;
}

ResultsDir load_results(const std::string& dir) {
  ResultsDir results = load_results_dir(dir);
  for (const auto& w : results.warnings) write_stderr_line("gpucal: warning: " + w);
  return results;
}

}  // namespace gpucal::calibration
