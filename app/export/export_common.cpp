#include "app/export/export_common.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "app/export/export_registry.h"
#include "core/output/file_io.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

using nlohmann::json;
namespace fs = std::filesystem;

std::vector<ExportReport> export_to(const json& calibration, const std::string& target,
                                    const std::string& out_dir, const ExportSettings& settings) {
  std::vector<ExportReport> reports;
  if (target == "all") {
    // A host calibration describes no GPU: the GPU-only targets (XLA's tables) are not for it.
    const bool host = calibration_device_field(calibration, "backend") == "host";
    for (const ExportTarget& t : export_targets())
      if ((!t.workload || settings.workload()) && !(t.gpu_only && host))
        reports.push_back(t.write(calibration, settings, out_dir));
    return reports;
  }
  check_export_target(target);
  reports.push_back(export_with(target, calibration, settings, out_dir));
  return reports;
}

std::string format_export_report(const ExportReport& r, bool with_refusals) {
  std::ostringstream s;
  if (!r.ok()) {
    s << r.consumer << ": REFUSED, nothing written (" << r.refused.size() << " required figure(s) missing)\n";
    if (with_refusals)
      for (const auto& line : r.refused) s << "  missing: " << line << "\n";
  } else {
    s << r.consumer << ": wrote";
    for (const auto& f : r.files_written) s << " " << f;
    s << "\n";
    if (r.lead.rfind("INCOMPLETE:", 0) == 0) s << "  " << r.lead << "\n";  // what the files lack, said where they are named
  }
  for (const auto& a : r.assumed) s << "  assumed: " << a << "\n";
  for (const auto& n : r.notes) s << "  note: " << n << "\n";
  return s.str();
}

std::string terminal_export_report(const ExportReport& r, bool verbose) {
  const auto notes_file = std::find_if(r.files_written.begin(), r.files_written.end(), [](const std::string& f) {
    return fs::path(f).filename() == "NOTES.md";
  });
  if (verbose || (r.ok() && notes_file == r.files_written.end())) return format_export_report(r, /*with_refusals=*/false);
  ExportReport brief = r;
  brief.assumed.clear();
  brief.notes.clear();
  std::string text = format_export_report(brief, false);
  if (!r.notes.empty() || !r.assumed.empty())
    text += "  " + std::to_string(r.notes.size()) + " note(s), " + std::to_string(r.assumed.size()) + " assumption(s)" +
            (r.ok() ? ": " + *notes_file : std::string()) + " (--verbose prints them)\n";
  return text;
}

void write_export(ExportReport& report, const std::string& out_dir,
                  const std::vector<std::pair<std::string, std::string>>& files) {
  if (!report.ok()) return;
  const std::string dir = ensure_dir(out_dir, report.consumer);
  for (const auto& [name, text] : files) {
    const fs::path path = fs::path(dir) / name;
    // Names come from the calibration (a device name) and --set: each must stay inside the export.
    const fs::path inside = fs::path(name).lexically_normal();
    if (inside.is_absolute() || inside.empty() || *inside.begin() == "..")
      throw std::runtime_error(path.string() + ": outside " + dir + " (a file name from the calibration or --set)");
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw std::runtime_error(path.parent_path().string() + ": cannot create: " + ec.message());
    write_text_file(path.string(), text);
    report.files_written.push_back(path.string());
  }
  const std::string notes = (fs::path(dir) / kExportNotesFile).string();
  report.files_written.push_back(notes);
  write_text_file(notes, format_export_notes(report, dir));
}

std::string format_export_notes(const ExportReport& r, const std::string& dir) {
  std::ostringstream s;
  s << "# " << r.consumer << " export: what fills each field, converted how, and what is assumed\n\n";
  if (!r.lead.empty()) s << r.lead << "\n\n";
  for (const auto& f : r.files_written)
    if (fs::path(f).filename() != kExportNotesFile)
      s << "- wrote `" << fs::path(f).lexically_relative(dir).string() << "`\n";
  if (!r.assumed.empty()) s << "\n## Assumed (not measurements)\n\n";
  for (const auto& a : r.assumed) s << "- " << a << "\n";
  if (!r.notes.empty()) s << "\n## Where each figure comes from\n\n";
  for (const auto& n : r.notes) s << "- " << n << "\n";
  s << r.workload_notes;
  return s.str();
}

std::string calculon_dtype_name(const std::string& dtype) {
  if (dtype == "bf16") return "bfloat16";
  if (dtype == "fp16") return "float16";
  if (dtype == "fp32") return "float32";
  if (dtype == "fp64") return "float64";
  if (dtype.rfind("fp8", 0) == 0) return "float8";
  return dtype;
}

std::string nccl_type_name(const std::string& dtype) {
  if (dtype == "bf16") return "bfloat16";
  if (dtype == "fp16") return "half";
  if (dtype == "fp32") return "float";
  if (dtype == "fp64") return "double";
  return dtype;  // int8, uint8, int32, ... are already nccl-tests names
}

std::optional<int> dtype_size_bytes(const std::string& dtype) {
  if (dtype == "fp64" || dtype == "int64" || dtype == "uint64") return 8;
  if (dtype == "fp32" || dtype == "int32" || dtype == "uint32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  if (dtype == "int8" || dtype == "uint8" || dtype.rfind("fp8", 0) == 0) return 1;
  return std::nullopt;
}

std::string format_number(double value) {
  return json(value).dump();
}

std::string ensure_dir(const std::string& out_dir, const std::string& sub) {
  const fs::path dir = fs::path(out_dir) / sub;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir.string() + ": cannot create: " + ec.message());
  return dir.string();
}

void write_text_file(const std::string& path, const std::string& text) { write_file_atomic(path, text); }

std::string calibration_device_field(const nlohmann::json& calibration, const std::string& field) {
  if (!calibration.contains("run_metadata") || !calibration["run_metadata"].is_object()) return "";
  for (const auto& [bench, sidecar] : calibration["run_metadata"].items()) {
    (void)bench;
    if (sidecar.is_object() && sidecar.contains("device") && sidecar["device"].is_object() &&
        sidecar["device"].value(field, nlohmann::json()).is_string() &&
        !sidecar["device"][field].get<std::string>().empty())
      return sidecar["device"][field].get<std::string>();
  }
  return "";
}

std::string calibration_device_name(const nlohmann::json& calibration) {
  if (!calibration.contains("run_metadata") || !calibration["run_metadata"].is_object()) return "";
  for (const auto& [bench, sidecar] : calibration["run_metadata"].items()) {
    (void)bench;
    if (!sidecar.is_object()) continue;
    if (sidecar.contains("device") && sidecar["device"].is_object() && sidecar["device"].contains("name") &&
        sidecar["device"]["name"].is_string() && !sidecar["device"]["name"].get<std::string>().empty())
      return sidecar["device"]["name"].get<std::string>();
    if (sidecar.contains("sources") && sidecar["sources"].is_array())
      for (const auto& source : sidecar["sources"])
        if (source.is_object() && source.contains("device") && source["device"].is_string() &&
            !source["device"].get<std::string>().empty())
          return source["device"].get<std::string>();
  }
  return "";
}

}  // namespace gpucal::calibration
