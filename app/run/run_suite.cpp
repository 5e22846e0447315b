#include "app/run/run_suite.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "app/run/bench_runner.h"
#include "app/run/launch_plan.h"
#include "app/run/run_steps.h"
#include "app/run/summary.h"
#include "app/run/verdict.h"
#include "core/driver/flag_checks.h"
#include "core/output/file_io.h"

namespace gpucal::calibration {

namespace fs = std::filesystem;

namespace {

// Everything `gpucal run` can be told wrong, checked before any bench starts (exit 2):
// a bench started with it would fail later, one log file at a time.
void validate(const RunOptions& o) {
  find_suite(o.suite);
  if (o.backend != "auto" && o.backend != "cuda" && o.backend != "hip" && o.backend != "host")
    throw std::invalid_argument("--backend: unknown backend '" + o.backend + "' (expected auto, cuda, hip or host)");
  check_threads_flag(o.threads);
  if (!o.bin_dir.empty() && !fs::is_directory(o.bin_dir))
    throw std::invalid_argument("--bin-dir: '" + o.bin_dir + "' is not a directory");
  if (o.threads == "all" && o.backend == "host")
    throw std::invalid_argument("--threads all: counts GPUs, and the host backend has none; give a count (--threads 4)");
  if (o.repeat_process < 1 || o.repeat_process > 1000)
    throw std::invalid_argument("--repeat-process: expected 1 to 1000 processes per bench, got " +
                                std::to_string(o.repeat_process));
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

// One run per folder at a time: a second one would overwrite the first's CSVs and fits.
std::unique_ptr<AppendFile> lock_folder(const std::string& out_dir) {
  fs::create_directories(fs::path(out_dir) / "logs");
  try {
    return std::make_unique<AppendFile>((fs::path(out_dir) / ".gpucal-run.lock").string(),
                                        AppendFile::Lock::exclusive);
  } catch (const OpenError&) {
    throw std::invalid_argument("--out: another gpucal run is writing to '" + out_dir + "'");
  }
}

std::string signal_name(int sig) {
  return sig == SIGINT    ? "SIGINT"
         : sig == SIGTERM ? "SIGTERM"
         : sig == SIGHUP  ? "SIGHUP"
                          : "signal " + std::to_string(sig);
}

// Runs the benches in order; returns the signal that stopped them (0: none).
int run_benches(RunRecord& r, const RunOptions& o, const LaunchPlan& plan, std::ostream& log) {
  const bool live = &log == &std::cout && ::isatty(STDOUT_FILENO);
  for (const BenchInvocation& inv : r.suite->benches) {
    BenchRun run = run_bench(o, *r.suite, inv, plan, log, live);
    r.benches.push_back(run.outcome);
    if (run.signal_received) return run.signal_received;
  }
  return 0;
}

// The outcome on stderr in one line (what is missing, and why) and the exit code (verdict.h).
int finish(const RunRecord& r, const std::string& summary_path) {
  const Completeness c = completeness(r);
  std::string failed;
  for (const auto& b : r.benches)
    if (b.status.rfind("failed", 0) == 0)
      failed += (failed.empty() ? "" : ", ") + ("bench_" + b.bench) + " (" + b.status.substr(8);
  const std::string more = c.missing.size() > 1 ? " and more" : "";
  if (!failed.empty())
    gpucal::write_stderr_line("gpucal: error: suite " + r.suite->name + ": " + failed + " failed; see " +
                              (fs::path(r.out_dir) / "logs").string());
  else if (c.spoiled)
    gpucal::write_stderr_line("gpucal: error: suite " + r.suite->name + " incomplete: " + c.missing.front() + more +
                              ": " + std::to_string(r.suspect_rows) +
                              " row(s) were spoiled by other work on this machine; rerun on a quiet machine; see " +
                              summary_path);
  else if (!c.complete())
    gpucal::write_stderr_line("gpucal: error: suite " + r.suite->name + " incomplete: " + c.missing.front() + more +
                              "; see " + summary_path);
  return run_exit_code(c);
}

}  // namespace

void check_threads_flag(const std::string& threads) {
  if (!threads.empty() && threads != "all" && threads != "auto" &&
      !gpucal::check_number_text(threads, true, {.min = 1, .max = 1024}).empty())
    throw std::invalid_argument("--threads: expected a count from 1 to 1024, 'all' or 'auto', got '" + threads + "'");
}

int run_suite(const RunOptions& o, std::ostream& log) {
  validate(o);
  const auto lock = lock_folder(o.out_dir);
  RunRecord r{.suite = &find_suite(o.suite), .out_dir = o.out_dir, .backend_requested = o.backend};
  r.allow_suspect = o.allow_suspect;
  const int gpus = local_gpu_count(o.backend);
  LaunchPlan plan = plan_launch(
      o, [](const char* name) { return std::getenv(name); },
      o.mpirun.empty() && (o.threads.empty() || o.threads == "all" || o.threads == "auto") ? gpus : 0);
  plan.gpu = gpus > 0;
  r.single_rank = plan.skip;
  r.predict_args = plan.skip.empty() ? r.suite->predict : one_gpu_layout(r.suite->predict);
  r.predict_label = plan.skip.empty() ? r.suite->predict_label
                                       : r.suite->predict_model + ", on one rank (" + plan.skip + ")";
  r.launch = plan.how;
  log << "gpucal run: suite " << r.suite->name << " -> " << o.out_dir << " (backend " << o.backend
      << "; collectives and p2p: " << plan.how << ")" << std::endl;
  const std::string summary_path = (fs::path(o.out_dir) / "summary.md").string();
  if (const int sig = run_benches(r, o, plan, log)) {
    // Passed on to the bench, which kept its whole rows; nothing more is started, and the
    // folder is not fitted or exported half-measured.
    r.stopped_by = signal_name(sig);
    write_text_file(summary_path, summary_markdown(r));
    log << "stopped by " << r.stopped_by
        << ": the remaining benches, the fit and the exports were not run; rows "
        << "measured so far are in " << o.out_dir << "\n";
    return 128 + sig;
  }
  fit_step(r, log);
  if (!r.calibration.is_null()) {
    if (r.suite->exports) export_step(r, log);
    predict_step(r, o, log);
  }
  plots_step(r, o, log);
  write_text_file(summary_path, summary_markdown(r));
  log << "verdict:\n";
  for (const auto& line : verdict_lines(r)) log << "  " << line << "\n";
  log << "everything is in " << o.out_dir << ": summary.md (read it first), calibration.json, "
      << (r.suite->exports ? "export/, " : "")
      << (r.predict.path.empty() ? "" : "predict.json, ") << "plots/, logs/" << std::endl;
  return finish(r, summary_path);
}

}  // namespace gpucal::calibration
