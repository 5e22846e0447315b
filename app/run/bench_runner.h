// One bench of a `gpucal run`: found beside gpucal or in the build tree, started with the suite's
// axes and the run's launch (launch_plan.h), its output to logs/<bench>.log, and one line on the
// terminal: while it runs, on a terminal only, the points done of its total and the time left;
// when it ends, its outcome.
#pragma once
#include <ostream>
#include <string>

#include "app/run/launch_plan.h"
#include "app/run/run_record.h"
#include "app/run/run_suite.h"
#include "app/run/suites.h"

namespace gpucal::calibration {

struct BenchRun {
  BenchOutcome outcome;
  int signal_received = 0;  // SIGINT, SIGTERM or SIGHUP gpucal got while it ran
};

// `live`: redraw a progress line on `log` (a terminal) while the bench runs.
BenchRun run_bench(const RunOptions& options, const Suite& suite, const BenchInvocation& invocation,
                   const LaunchPlan& plan, std::ostream& log, bool live);

// The bench's outcome as its terminal line (no line end).
std::string bench_line(const BenchOutcome& outcome);

// This gpucal's path (/proc/self/exe, else argv[0] made absolute): benches and plots lie beside it.
std::string gpucal_executable(const std::string& gpucal_path);
std::string format_seconds(double seconds);  // "12.3 s", "-" for < 0
std::string shell_quote(const std::string& arg);
// A bench binary (bench_gemm, ...) where `gpucal run` looks for it: under --bin-dir, else beside
// gpucal or in the build tree; "" when absent (`tried` then lists the paths looked at).
std::string find_bench_binary(const RunOptions& options, const std::string& binary, std::string* tried = nullptr);

}  // namespace gpucal::calibration
