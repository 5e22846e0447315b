#include "app/run/bench_runner.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "app/common/child_process.h"
#include "app/common/csv_table.h"
#include "app/run/process_runs.h"

namespace gpucal::calibration {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string gpucal_executable(const std::string& gpucal_path) {
  std::error_code ec;
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  if (!ec) return self.string();
  return gpucal_path.empty() ? (fs::current_path() / "gpucal").string() : fs::absolute(gpucal_path).string();
}

std::string format_seconds(double seconds) {
  if (seconds < 0) return "-";
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << seconds << " s";
  return out.str();
}

namespace {

std::string bench_command(const RunOptions& o, const Suite& suite, const BenchInvocation& inv,
                          const LaunchPlan& plan, const fs::path& binary, const std::string& csv) {
  std::ostringstream cmd;
  if (inv.distributed && !plan.mpirun.empty()) cmd << plan.mpirun << " ";
  cmd << shell_quote(binary.string()) << " --backend " << shell_quote(o.backend) << " --out "
      << shell_quote(csv) << " --quiet --max-time-per-point " << suite.max_time_per_point_s;
  for (const auto& arg : inv.args) cmd << " " << shell_quote(arg);
  if (inv.distributed && !plan.threads.empty()) cmd << " --threads " << shell_quote(plan.threads);
  return cmd.str();
}

// The points the bench will measure (Google Benchmark's listing), or 0 when unknown.
int count_points(const std::string& command) {
  FILE* pipe = ::popen((command + " --benchmark_list_tests </dev/null 2>/dev/null").c_str(), "r");
  if (!pipe) return 0;
  int lines = 0;
  for (int c; (c = std::fgetc(pipe)) != EOF;) lines += c == '\n';
  return ::pclose(pipe) == 0 ? lines : 0;
}

// Rows written so far, and those measured: the CSV is flushed as each point finishes.
std::pair<int, int> count_rows(const std::string& csv_path) {
  if (!fs::exists(csv_path)) return {0, 0};
  try {
    const CsvTable t = CsvTable::read_file(csv_path);
    int ok = 0;
    for (std::size_t r = 0; r < t.row_count(); ++r) ok += t.get_string_or(r, "status", "") == "ok";
    return {static_cast<int>(t.row_count()), ok};
  } catch (const std::exception&) {
    return {0, 0};
  }
}

// The bench's own last error line in its log, for the summary.
std::string last_error_line(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.rfind("bench_", 0) == 0 || line.find("error") != std::string::npos) last = line;
  return last;
}

std::string padded(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace

// Beside gpucal, or in the build tree's bench_<name>/ (gpucal lives in <build>/app).
std::string find_bench_binary(const RunOptions& o, const std::string& binary, std::string* tried) {
  const fs::path dir = fs::path(gpucal_executable(o.gpucal_path)).parent_path();
  const std::vector<fs::path> candidates =
      o.bin_dir.empty() ? std::vector<fs::path>{dir / binary, dir.parent_path() / binary / binary}
                        : std::vector<fs::path>{fs::path(o.bin_dir) / binary};
  for (const fs::path& c : candidates) {
    if (tried) *tried += (tried->empty() ? "" : ", ") + c.string();
    if (fs::exists(c)) return c.string();
  }
  return "";
}

std::string bench_line(const BenchOutcome& b) {
  std::ostringstream line;
  line << "  " << padded(b.bench, 13);
  if (b.ok()) {
    line << padded("ok", 10) << std::setw(4) << b.rows << " points";
    if (b.rows > b.ok_rows) line << " (" << b.rows - b.ok_rows << " skipped)";
    line << "  " << format_seconds(b.seconds);
  } else {
    line << b.status << (b.detail.empty() ? "" : ": " + b.detail);
  }
  return line.str();
}

BenchRun run_bench(const RunOptions& o, const Suite& suite, const BenchInvocation& requested,
                   const LaunchPlan& plan, std::ostream& log, bool live) {
  // One rank: what needs no group, as one process (launch_plan.h).
  const bool single = requested.distributed && !plan.skip.empty() && !requested.single_args.empty();
  BenchInvocation inv = single ? BenchInvocation{.bench = requested.bench, .args = requested.single_args} : requested;
  if (plan.gpu && !requested.gpu_args.empty()) inv.args = requested.gpu_args;
  BenchRun run;
  BenchOutcome& b = run.outcome;
  b.bench = inv.bench;
  const std::string binary = "bench_" + inv.bench;
  const fs::path found = find_bench_binary(o, binary);
  if (found.empty()) {
    b.status = "not built";
    b.detail = o.bin_dir.empty() ? "no " + binary + " beside gpucal or in the build tree"
                                 : "no " + binary + " in " + o.bin_dir;
  } else if (inv.distributed && !plan.skip.empty() && inv.single_args.empty()) {
    b.status = "skipped";
    b.detail = plan.skip;
  }
  if (!b.status.empty()) {
    log << bench_line(b) << "\n";
    return run;
  }
  const std::string csv = (fs::path(o.out_dir) / (inv.bench + ".csv")).string();
  b.command = bench_command(o, suite, inv, plan, found, csv);
  const std::string bench_log = (fs::path(o.out_dir) / "logs" / (inv.bench + ".log")).string();
  const int total = live && !(inv.distributed && !plan.mpirun.empty()) ? count_points(b.command) : 0;
  const auto started = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  auto draw = [&] {
    const int done = count_rows(csv).first;
    log << "\r\033[K  " << padded(inv.bench, 13) << "[" << done
        << (total > 0 ? "/" + std::to_string(total) : "") << " points]  " << static_cast<int>(seconds())
        << " s";
    if (total > 0 && done > 0 && done < total)
      log << ", ~" << static_cast<int>(seconds() / done * (total - done)) << " s left";
    log << std::flush;
  };
  if (live) draw();
  // stdin from /dev/null: the bench's process group is not the terminal's foreground group, and
  // a launcher that reads stdin (mpirun forwards it to rank 0) would be stopped by SIGTTIN.
  // --repeat-process N: N processes, merged into the one CSV (app/run/process_runs.h).
  const ChildResult child =
      o.repeat_process > 1
          ? run_bench_processes([&](const std::string& path) { return bench_command(o, suite, inv, plan, found, path); },
                                o.out_dir, inv.bench, bench_log, o.repeat_process, log)
          : run_shell_command(b.command + " </dev/null >" + shell_quote(bench_log) + " 2>&1",
                              live ? std::function<void()>(draw) : nullptr);
  b.seconds = seconds();
  std::tie(b.rows, b.ok_rows) = count_rows(csv);
  b.status = child.status == 0 ? "ok" : "failed (exit " + std::to_string(child.status) + ")";
  if (child.status != 0) {
    const std::string why = last_error_line(bench_log);
    b.detail = (why.empty() ? "" : why + "; ") + "see " + bench_log;
  }
  log << (live ? "\r\033[K" : "") << bench_line(b) << std::endl;
  run.signal_received = child.signal_received;
  return run;
}

}  // namespace gpucal::calibration
