#include "app/export/export_registry.h"

#include <stdexcept>

#include "core/registry/registry.h"

namespace gpucal::calibration {

// Each target's writer, defined in its own file app/export/export_<name>.cpp.
ExportReport export_calculon(const nlohmann::json&, const ExportSettings&, const std::string& out_dir);
ExportReport export_astrasim(const nlohmann::json&, const ExportSettings&, const std::string& out_dir);
ExportReport export_nersc(const nlohmann::json&, const ExportSettings&, const std::string& out_dir);
ExportReport export_vtrain(const nlohmann::json&, const ExportSettings&, const std::string& out_dir);
ExportReport export_xla(const nlohmann::json&, const ExportSettings&, const std::string& out_dir);
ExportReport export_chakra(const nlohmann::json&, const ExportSettings&, const std::string& out_dir);
ExportReport export_simai(const nlohmann::json&, const ExportSettings&, const std::string& out_dir);

const std::vector<ExportTarget>& export_targets() {
  static const std::vector<ExportTarget> table{
      {.name = "calculon", .tool = "Calculon",
       .help = "system JSON: matrix/vector rates with efficiency tables, memory tiers, networks",
       .needs_group = true, .write = export_calculon},
      {.name = "astrasim", .tool = "ASTRA-sim",
       .help = "network YAML per dimension and system JSON (analytical backend)", .needs_group = true,
       .runs_with = "chakra", .write = export_astrasim},
      {.name = "nersc", .tool = "NERSC transformer-perf-estimates",
       .help = "system JSON: matrix/vector flops, HBM, NVLink and IB bandwidths, latencies, efficiencies",
       .needs_group = true, .write = export_nersc},
      {.name = "vtrain", .tool = "vTrain",
       .help = "nccl-tests-style allreduce tables per GPU count, 1 MiB to 1 GiB in 1 MiB steps",
       .needs_group = true, .write = export_vtrain},
      {.name = "xla", .tool = "XLA",
       .help = "XLA's matmul and collective perf tables (textproto) for the device, every grid point XLA looks up",
       .gpu_only = true, .write = export_xla},
      {.name = "chakra", .tool = "ASTRA-sim (Chakra traces)",
       .help = "a Chakra execution trace per rank and the communicator groups, from --model and the layout",
       .workload = true, .runs_with = "astrasim", .write = export_chakra},
      {.name = "simai", .tool = "SimAI",
       .help = "SimAI's workload text and busbw.yaml, from --model and the layout",
       .workload = true, .write = export_simai},
  };
  return table;
}

void check_export_target(std::string_view target) {
  if (target == "all" || registry::find(export_targets(), target) != nullptr) return;
  std::vector<std::string> names = registry::names(export_targets());
  names.push_back("all");
  throw std::invalid_argument(registry::unknown_message("export target", target, names));
}

bool export_target_takes_model(std::string_view target) {
  if (target == "all") return true;
  const ExportTarget* t = registry::find(export_targets(), target);
  return t != nullptr && t->workload;
}

ExportReport export_with(std::string_view target, const nlohmann::json& calibration, const ExportSettings& settings,
                         const std::string& out_dir) {
  return registry::lookup(export_targets(), target, "export target").write(calibration, settings, out_dir);
}

}  // namespace gpucal::calibration
