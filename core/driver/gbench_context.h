// Google Benchmark prints its context block on stderr before the first benchmark (the date,
// the CPU and its caches, the load average, and, for a library built without NDEBUG,
// "***WARNING*** Library was built as DEBUG. Timings may be affected."). The timings here are
// gpucal's own (core/measure), not the library's loop, and the sidecar says once what the
// library is (libraries.google_benchmark): with --quiet the block is not shown at all, without
// it the block is shown less that warning. Other lines on stderr meanwhile pass through.
#pragma once

#include <sstream>
#include <streambuf>
#include <string>

namespace gpucal {

// Whether a line is one of the context block's.
bool is_gbench_context_line(const std::string& line);
// The lines of the block to show on the terminal: none with `quiet`, else all but the DEBUG warning.
std::string shown_gbench_context(const std::string& captured, bool quiet);

class GbenchContextFilter {
 public:
  explicit GbenchContextFilter(bool quiet);  // captures std::cerr from here
  ~GbenchContextFilter() { release(); }
  GbenchContextFilter(const GbenchContextFilter&) = delete;
  GbenchContextFilter& operator=(const GbenchContextFilter&) = delete;
  // Ends the capture and writes what is shown; the first point calls it. Idempotent.
  void release();

 private:
  std::ostringstream captured_;
  std::streambuf* saved_ = nullptr;
  bool quiet_;
};

}  // namespace gpucal
