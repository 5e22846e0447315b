#include "app/import/import_formats.h"

#include "core/registry/registry.h"

namespace gpucal::calibration {

// Each format's rule and reader, defined in its reader's file.
bool detects_nccl_tests_json(const std::string& line);
std::vector<ImportedRun> parse_nccl_tests_json_file(const std::string&, const std::vector<LogLine>&,
                                                    const ImportOptions&);
bool detects_nccl_tests_text(const std::string& line);
std::vector<ImportedRun> parse_nccl_tests_text(const std::string&, const std::vector<LogLine>&, const ImportOptions&);
bool detects_osu(const std::string& line);
std::vector<ImportedRun> parse_osu(const std::string&, const std::vector<LogLine>&, const ImportOptions&);
bool detects_size_time_csv(const std::string& line);
std::vector<ImportedRun> parse_size_time_csv(const std::string&, const std::vector<LogLine>&, const ImportOptions&);
bool detects_xla_table(const std::string& line);
std::vector<ImportedRun> parse_xla_table(const std::string&, const std::vector<LogLine>&, const ImportOptions&);

const std::vector<ImportFormat>& import_formats() {
  static const std::vector<ImportFormat> table{
      {.name = "nccl-tests-json", .help = "nccl-tests -J output: a JSON document (its first line with content starts with '{') with a "
               "'results' list",
       .scope = FormatScope::whole_file, .detects = detects_nccl_tests_json, .parse = parse_nccl_tests_json_file},
      {.name = "nccl-tests",
       .help = "nccl-tests / rccl-tests text output: a '# nThread' header, a '# size count type' column header, "
               "a version or '# Collective test starting' line",
       .scope = FormatScope::table, .detects = detects_nccl_tests_text, .parse = parse_nccl_tests_text},
      {.name = "osu", .help = "OSU Micro-Benchmarks output: a '# OSU ... Test' title",
       .scope = FormatScope::table, .detects = detects_osu, .parse = parse_osu},
      {.name = "csv",
       .help = "a CSV from another tool: a header naming size_bytes and time_us (collective, dtype, nranks optional)",
       .scope = FormatScope::whole_file, .detects = detects_size_time_csv, .parse = parse_size_time_csv},
      {.name = "xla",
       .help = "XLA's GPU performance tables (the GEMM table xla.GemmPerfTable, the collective table "
               "xla.gpu.DeviceHloInstructionProfiles): the textproto (a line 'entries {') or the C++ header "
               "embedding it (a line '...PTable[] = R\"pb(')",
       .scope = FormatScope::table, .detects = detects_xla_table, .parse = parse_xla_table},
  };
  return table;
}

std::string check_import_format(const std::string& name) {
  if (name == "auto" || registry::find(import_formats(), name) != nullptr) return "";
  std::vector<std::string> names = registry::names(import_formats());
  names.push_back("auto");
  return registry::unknown_message("import format", name, names);
}

}  // namespace gpucal::calibration
