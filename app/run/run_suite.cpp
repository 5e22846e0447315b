#include "app/run/run_suite.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <sstream>

#include "app/common/calibration_json.h"
#include "app/common/child_process.h"
#include "app/export/export_common.h"
#include "app/export/export_figures.h"
#include "app/common/results_dir.h"
#include "core/output/file_io.h"
#include "core/driver/flag_checks.h"
#include "app/run/suites.h"

#ifndef GPUCAL_SOURCE_PLOTS_DIR
#define GPUCAL_SOURCE_PLOTS_DIR ""
#endif

namespace gpucal::calibration {

namespace fs = std::filesystem;
using nlohmann::json;

std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

namespace {

int exit_status(int system_result) {
  if (system_result == -1) return 127;
  return WIFEXITED(system_result) ? WEXITSTATUS(system_result) : 128 + WTERMSIG(system_result);
}

fs::path self_dir(const std::string& gpucal_path) {
  std::error_code ec;
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  if (!ec) return self.parent_path();
  return gpucal_path.empty() ? fs::current_path() : fs::absolute(gpucal_path).parent_path();
}

// Beside gpucal, or in the build tree's bench_<name>/ (gpucal lives in <build>/app).
std::vector<fs::path> bench_candidates(const RunOptions& o, const std::string& binary) {
  if (!o.bin_dir.empty()) return {fs::path(o.bin_dir) / binary};
  const fs::path dir = self_dir(o.gpucal_path);
  return {dir / binary, dir.parent_path() / binary / binary,
          dir.parent_path().parent_path() / "bin" / binary};
}

struct BenchOutcome {
  std::string bench, command, status;  // status: ok | failed (exit N) | not built
  double seconds = -1;                 // the bench's wall time; < 0: it did not run
};

// "12.3 s" (one decimal), or "-" for a bench that did not run.
std::string format_seconds(double seconds) {
  if (seconds < 0) return "-";
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << seconds << " s";
  return out.str();
}

// An executable path, or a name found in one of PATH's folders.
bool program_found(const std::string& program) {
  auto executable = [](const fs::path& p) { return fs::is_regular_file(p) && ::access(p.c_str(), X_OK) == 0; };
  if (program.find('/') != std::string::npos) return executable(program);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (executable(fs::path(dir.empty() ? "." : dir) / program)) return true;
  return false;
}

// Everything `gpucal run` can be told wrong, checked before any bench starts (exit 2):
// a bench started with it would fail later, one log file at a time.
void validate(const RunOptions& o) {
  find_suite(o.suite);
  if (o.backend != "auto" && o.backend != "cuda" && o.backend != "hip" && o.backend != "host")
    throw std::invalid_argument("--backend: unknown backend '" + o.backend + "' (expected auto, cuda, hip or host)");
  if (!o.threads.empty() && o.threads != "all") {
    const std::string why = gpucal::check_number_text(o.threads, true, {.min = 1, .max = 1024});
    if (!why.empty()) throw std::invalid_argument("--threads: " + why + " or 'all'");
  }
  if (!o.bin_dir.empty() && !fs::is_directory(o.bin_dir))
    throw std::invalid_argument("--bin-dir: '" + o.bin_dir + "' is not a directory");
  if (o.threads == "all" && o.backend == "host")
    throw std::invalid_argument("--threads all: counts GPUs, and the host backend has none; give a count (--threads 4)");
  if (o.out_dir.empty()) throw std::invalid_argument("--out: expected a folder name, got ''");
  if (fs::exists(o.out_dir) && !fs::is_directory(o.out_dir))
    throw std::invalid_argument("--out: '" + o.out_dir + "' exists and is not a folder");
  // A run writes a new folder: fitting one run's CSVs beside another's (a bench skipped this
  // time keeps the last run's file) would mix them without a word.
  if (fs::is_directory(o.out_dir) && !fs::is_empty(o.out_dir))
    throw std::invalid_argument("--out: '" + o.out_dir + "' exists and is not empty; gpucal run writes a new results folder");
  if (!o.mpirun.empty()) {
    std::istringstream words(o.mpirun);
    std::string program;
    if (!(words >> program)) throw std::invalid_argument("--mpirun: expected a launcher command, got '" + o.mpirun + "'");
    if (!program_found(program))
      throw std::invalid_argument("--mpirun: '" + program + "' is not an executable file or on PATH");
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

}  // namespace

std::string find_python_with_matplotlib(std::string& why_not) {
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    const std::string probe = std::string(python) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (exit_status(std::system(probe.c_str())) == 0) return python;
  }
  why_not = "neither /usr/bin/python3 nor python3 on PATH can import matplotlib";
  return "";
}

std::string find_plots_dir(const std::string& gpucal_path) {
  if (const char* env = std::getenv("GPUCAL_PLOTS_DIR"); env && *env) return env;
  const fs::path beside = self_dir(gpucal_path) / "plots";
  if (fs::exists(beside / "plot_results.py")) return beside.string();
  return GPUCAL_SOURCE_PLOTS_DIR;
}

std::string find_bench_binary(const RunOptions& o, const std::string& binary, std::string* tried) {
  for (const fs::path& candidate : bench_candidates(o, binary)) {
    if (tried) *tried += (tried->empty() ? "" : ", ") + candidate.string();
    if (fs::exists(candidate)) return candidate.string();
  }
  return "";
}

int run_suite(const RunOptions& o, std::ostream& log) {
  validate(o);
  const Suite& suite = find_suite(o.suite);
  fs::create_directories(fs::path(o.out_dir) / "logs");
  // One run per folder at a time: a second one would overwrite the first's CSVs and fits.
  std::unique_ptr<AppendFile> folder_lock;
  try {
    folder_lock = std::make_unique<AppendFile>((fs::path(o.out_dir) / ".gpucal-run.lock").string(),
                                               AppendFile::Lock::exclusive);
  } catch (const OpenError&) {
    throw std::invalid_argument("--out: another gpucal run is writing to '" + o.out_dir + "'");
  }
  log << "gpucal run: suite " << suite.name << " (" << suite.purpose << ") -> " << o.out_dir << "\n";
  std::vector<BenchOutcome> outcomes;
  int interrupted = 0;  // the signal that stopped the run
  bool any_failed = false;
  std::string failed_benches;
  for (const BenchInvocation& inv : suite.benches) {
    const std::string binary = "bench_" + inv.bench;
    std::string tried;
    const fs::path found = find_bench_binary(o, binary, &tried);
    if (found.empty()) {
      log << "  " << binary << ": not built, skipped (looked for " << tried << ")\n";
      outcomes.push_back({inv.bench, "", "not built"});
      continue;
    }
    if (inv.distributed && o.mpirun.empty() && o.threads.empty()) {
      // Communication benches need several ranks; without a launcher they would only
      // report an error, so say what to pass instead.
      log << "  " << binary << ": skipped: needs ranks, e.g. --mpirun \"mpirun -np 4\" or --threads all\n";
      outcomes.push_back({inv.bench, "", "skipped: needs --mpirun or --threads"});
      continue;
    }
    std::ostringstream cmd;
    if (inv.distributed) cmd << o.mpirun << " ";
    cmd << shell_quote(found.string()) << " --backend " << shell_quote(o.backend) << " --out "
        << shell_quote((fs::path(o.out_dir) / (inv.bench + ".csv")).string()) << " --quiet --max-time-per-point "
        << suite.max_time_per_point_s;
    for (const auto& arg : inv.args) cmd << " " << shell_quote(arg);
    if (inv.distributed && !o.threads.empty()) cmd << " --threads " << shell_quote(o.threads);
    const std::string bench_log = (fs::path(o.out_dir) / "logs" / (inv.bench + ".log")).string();
    log << "  " << binary << ": " << cmd.str() << std::endl;  // flushed: the bench's output follows
    const auto started = std::chrono::steady_clock::now();
    // stdin from /dev/null: the bench's process group is not the terminal's foreground group, and
    // a launcher that reads stdin (mpirun forwards it to rank 0) would be stopped by SIGTTIN.
    const ChildResult child = run_shell_command(cmd.str() + " </dev/null >" + shell_quote(bench_log) + " 2>&1");
    const int status = child.status;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const std::string verdict = status == 0 ? "ok" : "failed (exit " + std::to_string(status) + ", see " + bench_log + ")";
    if (status != 0) {
      any_failed = true;
      failed_benches += (failed_benches.empty() ? "" : ", ") + binary + " (exit " + std::to_string(status) + ")";
      const std::string why = last_error_line(bench_log);
      if (!why.empty()) log << "    " << why << "\n";
    }
    log << "    " << verdict << " in " << format_seconds(seconds) << "\n";
    outcomes.push_back({inv.bench, cmd.str(), verdict, seconds});
    if (child.signal_received) {
      interrupted = child.signal_received;
      break;
    }
  }
  const std::string stopped_by = interrupted == 0         ? ""
                                 : interrupted == SIGINT  ? "SIGINT"
                                 : interrupted == SIGTERM ? "SIGTERM"
                                 : interrupted == SIGHUP  ? "SIGHUP"
                                                          : "signal " + std::to_string(interrupted);
  std::ostringstream summary;
  summary << "# gpucal run: suite `" << suite.name << "`" << (interrupted ? " (stopped by " + stopped_by + ")" : "")
          << "\n\n" << suite.purpose << ". Backend `" << o.backend << "`.\n\n";
  summary << "## Benches\n\n| bench | status | wall time | command |\n| --- | --- | --- | --- |\n";
  double bench_seconds = 0;
  for (const auto& b : outcomes) {
    summary << "| " << b.bench << " | " << b.status << " | " << format_seconds(b.seconds) << " | `" << b.command
            << "` |\n";
    bench_seconds += std::max(0.0, b.seconds);
  }
  summary << "\nThe benches took " << format_seconds(bench_seconds) << " together.\n";
  if (interrupted) {
    // Passed on to the bench, which kept its whole rows; nothing more is started, and the
    // folder is not fitted or exported half-measured.
    log << "  stopped by " << stopped_by << ": the remaining benches, the fit and the exports were not run; rows "
        << "measured so far are in " << o.out_dir << "\n";
    summary << "\nStopped by " << stopped_by
            << ": the benches after the last one above, the fit and the exports were not run.\n";
    write_text_file((fs::path(o.out_dir) / "summary.md").string(), summary.str());
    return 128 + interrupted;
  }

  json calibration;
  size_t ok_rows = 0;
  try {
    const ResultsDir results = load_results_dir(o.out_dir);
    for (const auto& [name, b] : results.benches) ok_rows += b.ok_rows.size();
    calibration = build_calibration(results);
    write_json_file(calibration, (fs::path(o.out_dir) / "calibration.json").string());
    log << "  fit: wrote " << (fs::path(o.out_dir) / "calibration.json").string() << "\n";
  } catch (const std::exception& e) {
    log << "  fit: nothing to fit: " << e.what() << "\n";
    summary << "\nNo results to fit: " << e.what() << "\n";
  }
  if (!calibration.is_null()) {
    summary << "\n## Calibration (`calibration.json`)\n\n";
    if (calibration["compute"]["gemm"].is_object())
      for (const auto& [dtype, t] : calibration["compute"]["gemm"].items())
        summary << "- GEMM " << dtype << ": best " << t["best_tflops"].get<double>() << " TFLOP/s ("
                << t["regime"].get<std::string>() << ", `" << t["best_point"].get<std::string>() << "`)\n";
    if (const auto bw = memory_bandwidth_gbps(calibration, ExportSettings{}))
      summary << "- memory bandwidth: " << bw->value << " GB/s (" << bw->source << ")\n";
    for (const char* dtype : {"fp32", "fp16", "bf16"})
      if (const auto v = vector_tflops(calibration, ExportSettings{}, {dtype}))
        summary << "- vector " << dtype << ": best " << v->value << " TFLOP/s (fma_chain)\n";
    if (!calibration["communication"]["collectives"].empty())
      summary << "\n| collective | dtype | nranks | nnodes | alpha_us | beta_gbps (bus) | held-out MAPE % |\n"
              << "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
    for (const json& g : calibration["communication"]["collectives"]) {
      const json& ab = g["alpha_beta"];
      summary << "| " << g["collective"].get<std::string>() << " | " << g["dtype"].get<std::string>() << " | "
              << g["nranks"] << " | " << g["nnodes"] << " | "
              << (ab.contains("alpha_us") ? ab["alpha_us"].dump() : "-") << " | "
              << (ab.contains("beta_gbps") ? ab["beta_gbps"].dump() : "-") << " | "
              << (ab.contains("heldout") && ab["heldout"]["computed"] ? ab["heldout"]["mape_pct"].dump() : "-")
              << " |\n";
    }
    for (const auto& m : calibration["missing"]) summary << "- missing: " << m.get<std::string>() << "\n";
    summary << "\n## Exports (`export/`)\n\n";
    try {
      for (const ExportReport& r : export_to(calibration, "all", (fs::path(o.out_dir) / "export").string())) {
        log << "  export " << format_export_report(r);
        if (r.ok()) summary << "- " << r.consumer << ": " << r.files_written.size() << " file(s)\n";
        else summary << "- " << r.consumer << ": refused, " << r.refused.size() << " figure(s) missing (see `gpucal export`)\n";
      }
    } catch (const std::exception& e) {
      log << "  export failed: " << e.what() << "\n";
      summary << "- export failed: " << e.what() << "\n";
      any_failed = true;
    }
  }

  summary << "\n## Plots\n\n";
  std::string why_not;
  const std::string python = o.plots ? find_python_with_matplotlib(why_not) : "";
  if (!o.plots) {
    summary << "Skipped (--no-plots).\n";
  } else if (python.empty()) {
    log << "  plots: skipped: " << why_not << "\n";
    summary << "Skipped: " << why_not << ".\n";
  } else if (calibration.is_null()) {
    summary << "Skipped: no results.\n";
  } else {
    const std::string script = (fs::path(find_plots_dir(o.gpucal_path)) / "plot_results.py").string();
    const std::string cmd = python + " " + shell_quote(script) + " " + shell_quote(o.out_dir) + " -o " +
                            shell_quote((fs::path(o.out_dir) / "plots").string());
    log << "  plots: " << cmd << std::endl;
    const int status = exit_status(std::system(cmd.c_str()));
    log << "  plots: " << cmd << (status == 0 ? "" : " FAILED (exit " + std::to_string(status) + ")") << "\n";
    summary << (status == 0 ? "Written to `plots/`.\n" : "plot_results.py failed (exit " + std::to_string(status) + ").\n");
  }
  const std::string summary_path = (fs::path(o.out_dir) / "summary.md").string();
  write_text_file(summary_path, summary.str());
  log << "  summary: " << summary_path << "\n";
  log.flush();
  // The outcome on stderr in one line: what failed, or that nothing was measured at all.
  if (!failed_benches.empty())
    gpucal::write_stderr_line("gpucal: error: suite " + suite.name + ": " + failed_benches + " failed; see " +
                              (fs::path(o.out_dir) / "logs").string());
  else if (ok_rows == 0)
    gpucal::write_stderr_line("gpucal: error: suite " + suite.name + " measured nothing (no bench wrote an ok row); see " +
                              summary_path);
  return any_failed || ok_rows == 0 ? 1 : 0;
}

}  // namespace gpucal::calibration
