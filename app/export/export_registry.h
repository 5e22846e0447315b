// The export targets registry: one row per consumer gpucal writes inputs for. `gpucal export
// --to`'s choices, its help and its "unknown target" message are made from this table.
// Adding a target: its file app/export/export_<name>.cpp, its row in export_registry.cpp and
// its source in app/CMakeLists.txt (docs/extending.md). A workload target (.workload = true)
// reads the step from ExportSettings::workload() (app/export/export_workload.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "app/export/export_common.h"

namespace gpucal::calibration {

struct ExportTarget {
  std::string_view name;  // --to value, and the folder under the export folder
  std::string_view tool;  // the consumer, as its users name it
  std::string_view help;  // what is written, one line
  // A simulator workload: needs the step (--model and the layout flags); `--to all` leaves it
  // out without --model.
  bool workload = false;
  // Describes the network between GPUs, so it needs a communication group (2+ ranks) measured:
  // `gpucal run` with one rank calls it not applicable rather than refused (launch_plan.h).
  bool needs_group = false;
  // Describes a GPU (its tables are keyed by the GPU's architecture): `gpucal run` on the host
  // backend calls it not applicable rather than refused.
  bool gpu_only = false;
  // The target whose files a tool runs together with this one's (ASTRA-sim replays chakra's
  // traces on astrasim's network.yml and system.json): `gpucal run` writes both for the suite's
  // step, and their NOTES.md say that they go together. Empty: none.
  std::string_view runs_with;
  ExportReport (*write)(const nlohmann::json& calibration, const ExportSettings& settings,
                        const std::string& out_dir) = nullptr;
};

const std::vector<ExportTarget>& export_targets();
// std::invalid_argument naming the nearest target and the choices, unless `target` is a target
// or "all".
void check_export_target(std::string_view target);
// Whether `target` (a target or "all") writes a workload, i.e. reads --model.
bool export_target_takes_model(std::string_view target);
// The target named `target`'s writer (UsageError naming the choices for another name).
ExportReport export_with(std::string_view target, const nlohmann::json& calibration, const ExportSettings& settings,
                         const std::string& out_dir);

}  // namespace gpucal::calibration
