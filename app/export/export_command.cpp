#include "app/common/output_guard.h"
#include "app/export/export_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/common/calibration_schema.h"
#include "app/common/calibration_json.h"
#include "app/fit/calibration_build.h"
#include "app/common/results_dir.h"
#include "app/export/export_registry.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

CLI::App* ExportCommand::add_to(CLI::App& app) {
  std::string tools;
  for (const auto& t : export_targets()) tools += (tools.empty() ? "" : ", ") + std::string(t.tool);
  auto* cmd = app.add_subcommand("export", "write inputs for " + tools);
  cmd->add_option("RESULTS_DIR", source_, "results folder (its calibration.json when present, else the fit of its rows) or a calibration.json")->required();
  cmd->add_option("--to", target_,
                  registry::choices(export_targets()) +
                      " | all (the workload targets with --model; xla for a GPU's calibration), or a comma list:\n" +
                      registry::help_lines(export_targets()))
      ->required();
  cmd->add_option("--out", out_dir_, "output folder (default RESULTS_DIR/export)")->type_name("DIR");
  std::string set_help = "a figure by hand, KEY=VALUE (repeatable):";
  for (const auto& spec : export_setting_specs()) set_help += "\n  " + spec.key + " [" + spec.unit + "]: " + spec.fills;
  cmd->add_option("--set", set_items_, set_help)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_allow_suspect_flag(*cmd, allow_suspect_);
  cmd->add_flag("--verbose", verbose_, "print every note and assumption (NOTES.md beside each export holds them)");
  workload_.add(*cmd);
  cmd->footer(examples_footer({
      {"gpucal export results/smoke --to astrasim,vtrain",
       "ASTRA-sim's network and system files and vTrain's tables under results/smoke/export/<target>/ (--to all: "
       "every consumer; one the folder lacks figures for is refused, naming the --set that supplies them)"},
      {"gpucal export imported/ --to vtrain", "vTrain's all-reduce tables from imported nccl-tests logs (gpucal import)"},
      {"gpucal export results/smoke --to chakra --model llama3-8b --tp 2 --dp 2",
       "a calibrated Chakra trace per rank and the communicator groups for ASTRA-sim"},
  }));
  return cmd;
}

int ExportCommand::run() {
  namespace fs = std::filesystem;
  ExportSettings settings = ExportSettings::parse(set_items_);  // usage errors before any reading
  // --to takes one target, a comma list (like every list flag), or all.
  std::vector<std::string> targets;
  for (std::size_t at = 0; at <= target_.size();) {
    const std::size_t comma = std::min(target_.find(',', at), target_.size());
    const std::string t = target_.substr(at, comma - at);
    if (t.empty()) throw std::invalid_argument("--to: expected a target, a comma list of targets or all, got '" + target_ + "'");
    if (std::find(targets.begin(), targets.end(), t) != targets.end())
      throw std::invalid_argument("--to: '" + t + "' is named twice");
    targets.push_back(t);
    at = comma + 1;
  }
  if (targets.size() > 1 && std::find(targets.begin(), targets.end(), "all") != targets.end())
    throw std::invalid_argument("--to: all is every target; give it alone or list the targets");
  for (const std::string& t : targets) {
    check_export_target(t);
    workload_.check(t);
  }
  nlohmann::json calibration;
  std::string out_dir = out_dir_;
  refuse_outputs_over_inputs({{"--out", out_dir_}}, {.files = {source_}, .folders = {source_}, .reads_calibration_json = true});
  std::optional<ResultsDir> results;
  if (fs::is_regular_file(source_)) {
    calibration = read_calibration_file(source_);
    if (out_dir.empty()) out_dir = (fs::path(source_).parent_path() / "export").string();
  } else {
    results = load_results(source_, allow_suspect_);
    // As predict and predict-comm: the folder's calibration.json when it has one (a reference
    // calibration adds published and derived figures to its fit), else the fit of its rows.
    const fs::path existing = fs::path(source_) / "calibration.json";
    calibration = fs::is_regular_file(existing) ? read_calibration_file(existing.string()) : build_calibration(*results);
    if (out_dir.empty()) out_dir = (fs::path(source_) / "export").string();
  }
  settings.set_workload(workload_.resolve(source_, results ? &*results : nullptr, calibration));
  int status = 0;
  bool comm_refused = false;  // a refused figure of a collective or a network tier
  for (const std::string& t : targets)
    for (const ExportReport& r : export_to(calibration, t, out_dir, settings)) {
      std::cout << terminal_export_report(r, verbose_);
      for (const auto& line : r.refused) {
        std::cerr << "gpucal: export " << r.consumer << " refused: " << line << "\n";
        for (const char* word : {"allreduce", "allgather", "reduce_scatter", "collective", "network", "inter-node"})
          comm_refused = comm_refused || line.find(word) != std::string::npos;
      }
      if (!r.ok()) status = 2;
    }
  if (comm_refused) {
    // A group imported from a log that names no hosts has no tier; say how to give it one.
    std::set<std::string> unknown;
    if (calibration.contains("communication") && calibration["communication"].contains("collectives") &&
        calibration["communication"]["collectives"].is_array())
      for (const auto& g : calibration["communication"]["collectives"])
        if (g.is_object() && g.value("spans_nodes", int64_t{0}) < 0)
          unknown.insert(g.value("collective", "?") + " " + g.value("dtype", "?") + " at " +
                         std::to_string(g.value("nranks", int64_t{0})) + " ranks");
    if (!unknown.empty()) {
      std::string list;
      for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + u;
      std::cerr << "gpucal: export: " << list << (unknown.size() > 1 ? " are" : " is")
                << " in no tier: its log names no hosts, so ranks per node are unknown; "
                << calibration::kNodesUnknownRemedy << "\n";
    }
  }
  return status;
}

}  // namespace gpucal::calibration
