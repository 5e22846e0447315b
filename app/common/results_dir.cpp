#include "app/common/results_dir.h"
#include "core/output/file_io.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace gpucal::calibration {

namespace fs = std::filesystem;

const std::vector<std::string>& common_columns() {
  // The columns calibration relies on; benches write more (see results/SCHEMA.md).
  static const std::vector<std::string> columns{"bench", "point", "status", "regime", "samples",
                                                "time_us_median", "time_us_p10", "time_us_p90"};
  return columns;
}

namespace {

// The CSV schema versions this gpucal reads (core/output/csv_sink.h writes the newest in every
// row; 2 added columns only, so a version 1 file reads as one without them).
constexpr int64_t kOldestCsvSchemaVersion = 1, kNewestCsvSchemaVersion = 2;

// What every fit and comparison relies on: rows in a schema this gpucal knows, and ok rows
// whose times are measurements (positive and finite), never nan, inf or a sign error.
void check_rows(const CsvTable& t) {
  const bool versioned = t.has_column("schema_version");
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    const std::string where = t.source() + ":" + std::to_string(t.line_of(r)) + ": ";
    const int64_t version = versioned ? t.get_int(r, "schema_version") : kOldestCsvSchemaVersion;
    if (version < kOldestCsvSchemaVersion || version > kNewestCsvSchemaVersion)
      throw CsvError(where + "schema_version " + t.get_string(r, "schema_version") + ", this gpucal reads " +
                     std::to_string(kOldestCsvSchemaVersion) + " to " + std::to_string(kNewestCsvSchemaVersion));
    if (t.get_string(r, "status") != "ok") continue;
    for (const char* column : {"time_us_median", "time_us_p10", "time_us_p90"}) {
      const double v = t.get_double(r, column);
      if (!std::isfinite(v) || v <= 0)
        throw CsvError(where + "column '" + column + "': '" + t.get_string(r, column) +
                       "' in an ok row (a time must be positive and finite)");
    }
  }
}

// Ok rows go to the fits unless their timings are suspect (a `suspect` reason: preempted,
// core/measure/preemption.h); those are left out, and said so, unless allowed.
void sort_ok_rows(BenchResults& results, bool allow_suspect, std::vector<std::string>& notes) {
  const CsvTable& t = results.table;
  const bool has_suspect = t.has_column("suspect");
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    if (t.get_string(r, "status") != "ok") continue;
    const bool suspect = has_suspect && !t.get_string(r, "suspect").empty();
    if (suspect) results.suspect_rows.push_back(r);
    if (!suspect || allow_suspect) results.ok_rows.push_back(r);
  }
  if (results.suspect_rows.empty()) return;
  const std::string count = std::to_string(results.suspect_rows.size()) + " ok row(s) with suspect timings";
  notes.push_back(results.bench + ".csv: " + count +
                  (allow_suspect ? " used in the fits (--allow-suspect)"
                                 : " left out of the fits (preempted: see their suspect column; --allow-suspect "
                                   "uses them)"));
}

}  // namespace

ResultsDir load_results_dir(const std::string& path, bool allow_suspect) {
  if (!fs::is_directory(path)) throw std::runtime_error(path + ": not a directory");
  ResultsDir dir;
  dir.path = path;
  for (const auto& bench : known_benches()) {
    const fs::path csv = fs::path(path) / (bench + ".csv");
    if (!fs::exists(csv)) continue;
    BenchResults results{bench, CsvTable::read_file(csv.string()), {}, {}, nullptr, std::nullopt};
    results.table.require_columns(common_columns());
    check_rows(results.table);
    dir.warnings.insert(dir.warnings.end(), results.table.warnings().begin(), results.table.warnings().end());
    sort_ok_rows(results, allow_suspect, dir.suspect_notes);
    const fs::path sidecar = fs::path(path) / (bench + ".json");
    if (fs::exists(sidecar)) {
      if (const std::string why = not_a_regular_file(sidecar.string()); !why.empty())
        throw std::runtime_error(sidecar.string() + ": " + why);
      std::ifstream in(sidecar);
      try {
        results.sidecar = nlohmann::json::parse(in);
      } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(sidecar.string() + ": malformed JSON: " + e.what());
      }
    }
    const fs::path samples = fs::path(path) / (bench + ".samples.csv");
    if (fs::exists(samples)) results.samples_by_point = read_samples_file(samples.string(), &dir.warnings);
    dir.benches.emplace(bench, std::move(results));
  }
  if (dir.benches.empty())
    throw std::runtime_error(path + ": no gemm.csv, attention.csv, collectives.csv, p2p.csv or memory.csv");
  return dir;
}

}  // namespace gpucal::calibration
