// Google Benchmark's own flags as its users expect them to behave here, read the way
// Google Benchmark 1.7.1 (Debian bookworm) reads them: `--name=value`, a boolean also as a
// bare `--name`, the last occurrence winning, and BENCHMARK_<NAME> in the environment as
// the default. The driver takes some over:
// - --benchmark_min_time: our minimum sampling time per point, in both spellings (1.7's
//   "0.5" and 1.8's "0.5s"; 1.8's "100x" iterations form means --min-samples 100). Every
//   point is one Google Benchmark iteration, so the library's own reading is moot, and 1.7
//   rejects the newer forms: the flag is removed before the library sees it.
// - --benchmark_min_warmup_time: our --warmup-time (removed likewise).
// - --benchmark_list_tests: listing runs and writes nothing; --benchmark_out= is appended
//   so the library opens no output file either.
// Values the library would answer with its usage text and exit 0 (an unknown
// --benchmark_format, --benchmark_out_format, --benchmark_time_unit, an empty
// --benchmark_color) or with a crash (a negative --benchmark_repetitions) are refused here,
// as is a run that would measure nothing (--benchmark_repetitions=0): one line, exit 2,
// before any output file is opened. These flags are left for the library to read.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpucal {

struct GbenchFlags {
  bool list_tests = false;
  std::string filter;                 // --benchmark_filter
  std::string filter_source;          // "--benchmark_filter" or "BENCHMARK_FILTER" ("" when unset)
  int repetitions = 1;                // --benchmark_repetitions (validated: >= 1 unless listing)
  std::string out;                    // --benchmark_out (Google Benchmark's own output file)
  std::optional<double> min_time_s;   // --benchmark_min_time=X or Xs
  std::optional<int> min_iterations;  // --benchmark_min_time=Nx
  std::optional<double> min_warmup_time_s;
  std::string error;  // the first malformed value, as a one-line message ("" when none)
};

// Google Benchmark's IsTruthyFlagValue: "" (a bare flag) is true; "0", "f", "n", "false",
// "no", "off" (any case) and a single non-alphanumeric character are false.
bool gbench_truthy(const std::string& value);
// "0.5", "0.5s" -> seconds; "100x" -> iterations. Throws UsageError otherwise.
void parse_gbench_min_time(const std::string& value, GbenchFlags& flags);

// Reads the flags from `args` (argv, program name first) and `getenv`, removes the ones
// the driver takes over (malformed ones too, so the library never prints its own error),
// and appends --benchmark_out= when listing. A malformed --benchmark_min_time,
// --benchmark_min_warmup_time, --benchmark_repetitions, --benchmark_format,
// --benchmark_out_format, --benchmark_time_unit or --benchmark_color (the winning value, from
// the command line or the environment) is reported in `error`.
GbenchFlags take_gbench_flags(std::vector<std::string>& args,
                              const std::function<const char*(const char*)>& getenv_fn);

}  // namespace gpucal
