#include "app/common/output_guard.h"
#include "app/import/import_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <set>

#include "app/import/import_formats.h"
#include "app/import/import_writer.h"
#include "core/driver/flag_checks.h"
#include "core/formulas/collectives.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

CLI::App* ImportCommand::add_to(CLI::App& app) {
  auto* cmd = app.add_subcommand("import",
                                 "read benchmark logs (nccl-tests, rccl-tests, OSU, ...: the formats of --format) into "
                                 "a results folder (collectives.csv, p2p.csv, gemm.csv)");
  cmd->add_option("LOG", logs_, "log files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", out_dir_, "results folder to create (must not exist, or be empty)")->required()->type_name("DIR");
  cmd->add_option("--ranks-per-node", options_.ranks_per_node, "ranks per node: for logs that name no hosts")
      ->check(number_check<int>({.min = 1, .max = 1 << 20}));
  cmd->add_option("--nranks", options_.nranks, "ranks of the run, for logs that do not say (OSU collectives)")
      ->check(number_check<int>({.min = 1, .max = 1 << 24}));
  cmd->add_option("--device", options_.device, "device name, for logs that print none");
  cmd->add_option("--collective", options_.collective,
                  "collective measured, for nccl-tests tables that neither name it nor tell it by their columns "
                  "(allgather and alltoall print alike): " +
                      registry::choices(collectives(), ", "))
      ->check(collective_check());
  cmd->add_option("--table-key", options_.table_key,
                  "which device's table of an XLA file that holds several (sm_90, sm_100_B200, gfx950, ...)");
  cmd->add_option("--source-ref", options_.source_ref,
                  "where the logs came from (repository, path and commit, or a paper and its table): kept in every "
                  "row's status_detail and in the sidecar; default: each file's own '# source:' comment line");
  cmd->add_option("--format", options_.format,
                  "log format: auto (found by each format's rule; a log may hold several) or one of\n" +
                      registry::help_lines(import_formats()))
      ->check(CLI::Validator([](std::string& name) { return check_import_format(name); }, "auto|NAME"))
      ->default_str("auto");
  cmd->footer(examples_footer({
      {"gpucal import all_reduce.log all_gather.log --out h100/", "nccl-tests logs as printed (launcher tags and all)"},
      {"gpucal import pasted_table.txt --ranks-per-node 8 --out h100/",
       "a table pasted without its header: the collective from its columns, name what the log does not say"},
      {"gpucal import default_matmul_perf_table.txtpb --table-key sm_90 --source-ref 'openxla/xla@COMMIT PATH' "
       "--out xla-h100/",
       "XLA's measured GEMM table for one device, with where it came from"},
  }));
  return cmd;
}

int ImportCommand::run() {
  namespace fs = std::filesystem;
  // The same log twice would import every row twice under one point key.
  calibration::refuse_outputs_over_inputs({{"--out", out_dir_}}, {.files = logs_});
  std::set<fs::path> seen;
  for (const auto& log : logs_)
    if (!seen.insert(fs::weakly_canonical(fs::absolute(log))).second)
      throw std::invalid_argument("LOG: '" + log + "' is given twice");
  // Every log is read before anything is written: one bad log leaves no folder behind.
  std::vector<ImportedRun> runs;
  for (const auto& log : logs_)
    for (auto& run : import_log(log, options_)) runs.push_back(std::move(run));
  const ImportSummary summary = write_imported_results(runs, out_dir_, argv_);
  for (const auto& m : summary.messages) std::cout << m << "\n";
  std::cout << "wrote " << out_dir_ << ": " << summary.collective_rows << " collectives row(s), " << summary.p2p_rows
            << " p2p row(s), " << summary.gemm_rows << " gemm row(s)\n";
  return 0;
}

}  // namespace gpucal::calibration
