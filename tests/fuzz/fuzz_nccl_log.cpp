// libFuzzer target: NCCL TUNING log lines (core/world/nccl_log.h). Any text is either a record
// with sane fields or not a record; summarizing never fails.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "core/world/nccl_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const auto records = gpucal::parse_nccl_tuning_lines(lines);
  for (const auto& r : records)
    if (r.bytes < 0 || r.algo.empty() || r.proto.empty()) std::abort();
  const auto summary = gpucal::summarize_nccl_tuning(records, {"AllReduce", 1024, 4096});
  if (summary.matched < 0 || summary.matched > static_cast<int>(records.size())) std::abort();
  gpucal::expand_nccl_debug_file(text, "host", 42);
  return 0;
}
