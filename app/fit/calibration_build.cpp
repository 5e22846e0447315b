#include "app/fit/calibration_build.h"

#include <algorithm>
#include <set>

#include "app/common/calibration_json.h"
#include "app/fit/comm_fits.h"
#include "app/fit/compute_tables.h"
#include "app/fit/memory_tables.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

json distinct_values(const BenchResults& b, const std::string& column) {
  std::set<std::string> values;
  if (b.table.has_column(column))
    for (std::size_t r = 0; r < b.table.row_count(); ++r) values.insert(b.table.get_string(r, column));
  return json(std::vector<std::string>(values.begin(), values.end()));
}

// Ok rows with suspect timings that the fits left out (0 with --allow-suspect).
std::size_t suspect_left_out(const BenchResults& b) {
  std::size_t n = 0;
  for (std::size_t r : b.suspect_rows)
    if (std::find(b.ok_rows.begin(), b.ok_rows.end(), r) == b.ok_rows.end()) ++n;
  return n;
}

}  // namespace

json build_calibration(const ResultsDir& results) {
  std::vector<std::string> warnings = results.warnings, missing;
  warnings.insert(warnings.end(), results.suspect_notes.begin(), results.suspect_notes.end());
  json doc{{"calibration_schema_version", kCalibrationSchemaVersion},
           {"generated_by", "gpucal fit"},
           {"results_dir", results.path}};
  json sources = json::object(), metadata = json::object();
  for (const auto& [name, b] : results.benches) {
    sources[name] = {{"csv", name + ".csv"},
                     {"rows", b.table.row_count()},
                     {"ok_rows", b.ok_rows.size()},
                     {"suspect_left_out", suspect_left_out(b)},
                     {"devices", distinct_values(b, "device")},
                     {"backends", distinct_values(b, "backend")},
                     {"has_samples", b.samples_by_point.has_value()}};
    metadata[name] = b.sidecar;
  }
  doc["sources"] = sources;
  doc["run_metadata"] = metadata;

  json compute{{"gemm", nullptr}, {"attention", nullptr}};
  if (const BenchResults* b = results.find("gemm"); b && !b->ok_rows.empty())
    compute["gemm"] = gemm_tables(*b, warnings);
  else
    missing.push_back("compute.gemm: no ok rows in gemm.csv");
  if (const BenchResults* b = results.find("attention"); b && !b->ok_rows.empty())
    compute["attention"] = attention_tables(*b, warnings);
  else
    missing.push_back("compute.attention: no ok rows in attention.csv");
  doc["compute"] = compute;

  doc["memory"] = memory_section(results.find("p2p"), results.find("memory"), missing);

  doc["communication"] = fit_communication(results);
  if (doc["communication"]["collectives"].empty()) missing.push_back("communication.collectives: no ok rows in collectives.csv");
  if (doc["communication"]["p2p"].empty()) missing.push_back("communication.p2p: no ok non-copy rows in p2p.csv");
  doc["missing"] = missing;
  doc["warnings"] = warnings;
  return doc;
}

}  // namespace gpucal::calibration
