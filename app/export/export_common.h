// Shared pieces of the exporters (one file per target, app/export/export_<name>.cpp, each a row
// of app/export/export_registry.cpp). Exporters read a calibration.json document
// (app/common/calibration_json.h) and write the files one consumer loads
// UNMODIFIED: every field its code requires, in its units, with values converted so that the
// consumer's own formula reproduces our measurement (docs/field-reference.md lists what each tool's code
// reads). A required figure that is neither measured nor given with --set makes the export
// refuse: nothing is written for that consumer, and each missing figure is one line naming the
// run that measures it and the --set key that supplies it. Values that are not measurements
// (tool settings, the modelled machine) are listed in ExportReport::assumed.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/export/export_settings.h"

namespace gpucal::calibration {

struct ExportReport {
  std::string consumer;
  std::vector<std::string> files_written;
  std::vector<std::string> refused;  // one line per missing required figure; nothing written when not empty
  std::vector<std::string> assumed;  // "field = value: why" for every value that is not a measurement
  std::vector<std::string> notes;    // which measurement fills which field, and how it was converted
  // With --model, NOTES.md's "Workload-aware fields" section (app/export/workload_fit.h); empty
  // otherwise, so NOTES.md is as without it.
  std::string workload_notes;
  // One line a reader holding the files beside calibration.json needs first (Calculon: why its
  // latency is not the Calibration table's alpha): under NOTES.md's title and in summary.md.
  std::string lead;
  bool ok() const { return refused.empty(); }
};

// target: a name of the export registry (app/export/export_registry.h) or "all" ("all" leaves
// the workload targets out when `settings` holds no workload, and the GPU-only ones for a host
// calibration). Each consumer writes under
// out_dir/<consumer>/, with NOTES.md (the report) beside its files.
std::vector<ExportReport> export_to(const nlohmann::json& calibration, const std::string& target,
                                    const std::string& out_dir, const ExportSettings& settings = {});
// The report as text; with_refusals = false leaves the "missing:" lines out (the command prints
// those on stderr).
std::string format_export_report(const ExportReport& report, bool with_refusals = true);
// The terminal's lines for `report`: the format above with `verbose`; else what was written (or
// refused) and one line counting the notes and assumptions, which NOTES.md holds where written.
std::string terminal_export_report(const ExportReport& report, bool verbose);

// Writes `files` (name relative to out_dir/<consumer>, content) and NOTES.md when the report
// has no refusals, and records them in files_written; writes nothing otherwise.
void write_export(ExportReport& report, const std::string& out_dir,
                  const std::vector<std::pair<std::string, std::string>>& files);
constexpr const char* kExportNotesFile = "NOTES.md";
// NOTES.md's text: the files written (relative to `dir`), what is assumed, and where each figure
// comes from.
std::string format_export_notes(const ExportReport& report, const std::string& dir);

// ---- helpers shared by the exporters ----

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// What measures the collectives an export needs, for its refusals.
constexpr const char* kCollectivesRun = "bench_collectives (gpucal run --threads N, or under a launcher)";

// Our dtype names -> Calculon / nccl-tests names; bytes per element.
std::string calculon_dtype_name(const std::string& dtype);
std::string nccl_type_name(const std::string& dtype);
std::optional<int> dtype_size_bytes(const std::string& dtype);


std::string ensure_dir(const std::string& out_dir, const std::string& sub);
// The measured device's name: a bench sidecar's device.name, else an imported log's
// sources[].device (gpucal import: the log's GPU name, or --device); "" when none says.
std::string calibration_device_name(const nlohmann::json& calibration);
// A bench sidecar's device.<field> ("backend": host, cuda, hip); "" when no sidecar says.
std::string calibration_device_field(const nlohmann::json& calibration, const std::string& field);
// A number as JSON/YAML/CSV text: shortest round-trip form, never "1e+02" for integers.
std::string format_number(double value);
void write_text_file(const std::string& path, const std::string& text);

}  // namespace gpucal::calibration
