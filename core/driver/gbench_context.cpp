#include "core/driver/gbench_context.h"

#include <iostream>
#include <regex>

namespace gpucal {

bool is_gbench_context_line(const std::string& line) {
  // benchmark 1.7's BenchmarkReporter::PrintBasicContext, line by line.
  static const std::regex kContext(
      R"(^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d.*|Running .*|Run on \(.*|CPU Caches:|  L\d .*|Load Average: .*|\*\*\*WARNING\*\*\* .*)$)");
  return std::regex_match(line, kContext);
}

std::string shown_gbench_context(const std::string& captured, bool quiet) {
  std::istringstream in(captured);
  std::string shown;
  for (std::string line; std::getline(in, line);) {
    const bool context = is_gbench_context_line(line);
    if (context && (quiet || line.find("Library was built as DEBUG") != std::string::npos)) continue;
    shown += line + "\n";
  }
  return shown;
}

GbenchContextFilter::GbenchContextFilter(bool quiet) : quiet_(quiet) {
  std::cerr.flush();
  saved_ = std::cerr.rdbuf(captured_.rdbuf());
}

void GbenchContextFilter::release() {
  if (!saved_) return;
  std::cerr.rdbuf(saved_);
  saved_ = nullptr;
  std::cerr << shown_gbench_context(captured_.str(), quiet_) << std::flush;
}

}  // namespace gpucal
