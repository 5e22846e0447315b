#include "app/run/run_command.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "app/run/suites.h"

namespace gpucal::calibration {

CLI::App* RunCommand::add_to(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "run a suite of benches into one results folder, then fit, export, plot");
  std::string suite_help = "a suite of app/run/suites.cpp:";
  for (const Suite& s : suites()) suite_help += "\n  " + s.name + ": " + s.purpose;
  cmd->add_option("--suite", options_.suite, suite_help)->capture_default_str();
  out_opt_ = cmd->add_option("--out", options_.out_dir, "results folder to create (default: results/SUITE)")->type_name("DIR");
  cmd->add_option("--backend", options_.backend, "auto | cuda | hip | host")->capture_default_str();
  cmd->add_option("--bin-dir", options_.bin_dir, "where the bench_* binaries are (default: beside gpucal)")->type_name("DIR");
  cmd->add_option("--mpirun", options_.mpirun, "launcher for collectives/p2p, e.g. \"mpirun -np 4 --oversubscribe\"")
      ->check(CLI::Validator(
          [](std::string& text) {
            return text.find_first_not_of(" \t") == std::string::npos
                       ? std::string("expected a launcher command, got '" + text + "'")
                       : std::string();
          },
          "COMMAND"));
  cmd->add_option("--threads", options_.threads,
                  "or: run collectives/p2p as one process with N rank threads (all: one per GPU; auto: one per "
                  "GPU, or 4 on a node without one, never an allocation's launcher)")
      ->excludes(cmd->get_option("--mpirun"));
  cmd->add_flag("--no-plots", no_plots_, "do not call the plot scripts");
  add_allow_suspect_flag(*cmd, options_.allow_suspect);
  cmd->add_option("--repeat-process", options_.repeat_process,
                  "run each bench N times as separate processes and merge them (process_run column); "
                  "<bench>.process_runs.csv gives the spread between processes beside the spread within one, "
                  "and gpucal compare judges such points by it")
      ->capture_default_str();
  cmd->footer(examples_footer({
      {"gpucal run --suite smoke", "seconds: every bench on a few points, then fit, exports, plots, summary.md"},
      {"gpucal run --suite calibration --out h100/ --threads all",
       "the full tables for one node, collectives over every local GPU"},
      {"gpucal run --suite nightly --out nightly/$(date +%F) --mpirun \"mpirun -np 8\"",
       "the regression set; compare it with last week's folder (gpucal compare)"},
      {"gpucal run --suite nightly --out nightly/$(date +%F) --repeat-process 5",
       "each bench as 5 processes: compare then judges a point on the spread between processes"},
  }));
  return cmd;
}

int RunCommand::run() {
  options_.plots = !no_plots_;
  // results/ itself holds the schema and reference runs: each suite gets a folder of its own.
  if (out_opt_->count() == 0) options_.out_dir = "results/" + options_.suite;
  return run_suite(options_, std::cout);
}

}  // namespace gpucal::calibration
