#include "app/fit/fit_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "app/common/calibration_json.h"
#include "app/fit/calibration_build.h"
#include "app/common/output_guard.h"
#include "app/common/results_dir.h"
#include "app/fit/fit_report.h"
#include "core/output/file_io.h"

namespace gpucal::calibration {

CLI::App* FitCommand::add_to(CLI::App& app) {
  auto* cmd = app.add_subcommand("fit", "fit models to a results folder and write calibration.json");
  cmd->add_option("RESULTS_DIR", results_dir_, "results folder, or an interrupted run's FILE.csv.partial")->required();
  cmd->add_option("-o,--output", out_path_, "output file (default RESULTS_DIR/calibration.json)")->type_name("FILE");
  cmd->add_flag("--report", report_,
                "print each communication group's chosen form and cross-validated errors against log-log "
                "interpolation");
  add_allow_suspect_flag(*cmd, allow_suspect_);
  cmd->footer(examples_footer({
      {"gpucal fit results/smoke --report", "fit a run's folder and print how well each form predicts held-out sizes"},
      {"gpucal fit imported/ -o h100.json", "fit a folder of imported nccl-tests logs into another file"},
  }));
  return cmd;
}

int FitCommand::run() {
  namespace fs = std::filesystem;
  refuse_output_over_inputs("--output", out_path_, {results_dir_}, /*reads_calibration_json=*/false);
  const std::string out = out_path_.empty() ? default_calibration_path(results_dir_) : out_path_;
  const nlohmann::json calibration = build_calibration(load_results(results_dir_, allow_suspect_));
  write_json_file(calibration, out);
  std::cout << "wrote " << out << " (calibration_schema_version " << kCalibrationSchemaVersion << ", "
            << calibration["communication"]["collectives"].size() << " collective group(s), "
            << calibration["communication"]["p2p"].size() << " p2p group(s))\n";
  for (const auto& m : calibration["missing"]) std::cout << "  missing: " << m.get<std::string>() << "\n";
  for (const auto& w : calibration["warnings"]) std::cout << "  warning: " << w.get<std::string>() << "\n";
  if (report_) std::cout << format_fit_report(calibration);
  return 0;
}

}  // namespace gpucal::calibration
