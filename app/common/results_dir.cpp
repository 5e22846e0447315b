#include "app/common/results_dir.h"
#include "app/common/calibration_json.h"
#include "core/output/file_io.h"
#include "core/output/strict_json.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
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

// The quantities of an ok row that fits, comparisons and predictions compute with. A cell
// outside its range is a corrupted or hand-edited file, never a measurement.
enum class Range { time, size, rate, count };
const std::vector<std::pair<const char*, Range>>& checked_columns() {
  static const std::vector<std::pair<const char*, Range>> columns{
      {"time_us_median", Range::time}, {"time_us_p10", Range::time},   {"time_us_p90", Range::time},
      {"size_bytes", Range::size},     {"bytes", Range::size},         {"working_set_bytes", Range::size},
      {"bytes_counted", Range::size},  {"flops", Range::size},         {"tflops", Range::rate},
      {"bandwidth_gbps", Range::rate}, {"algbw_gbps", Range::rate},    {"busbw_gbps", Range::rate},
      {"nranks", Range::count},        {"nnodes", Range::count},       {"ranks_per_node", Range::count},
      {"m", Range::count},             {"n", Range::count},            {"k", Range::count},
      {"batch", Range::count},         {"seq_q", Range::count},        {"seq_kv", Range::count},
      {"head_dim", Range::count}};
  return columns;
}

void check_cell(const CsvTable& t, std::size_t r, const char* column, Range range, const std::string& where) {
  const std::string& text = t.get_string(r, column);
  if (range != Range::time && text.empty()) return;  // not every bench fills every column
  const double v = t.get_double(r, column);
  const bool ok = range == Range::time    ? std::isfinite(v) && v > 0
                  : range == Range::size  ? std::isfinite(v) && v > 0 && v <= 0x1p60
                  : range == Range::rate  ? std::isfinite(v) && v >= 0
                                          : v >= 1 && v <= 0x1p31 && v == std::floor(v);
  if (ok) return;
  const char* expected = range == Range::time   ? "a time must be positive and finite"
                         : range == Range::size ? "a size must be positive, finite and at most 2^60"
                         : range == Range::rate ? "a rate must be finite and not negative"
                                                : "a count must be a whole number from 1 to 2^31";
  throw CsvError(where + "column '" + column + "': '" + text + "' in an ok row (" + expected + ")");
}

// What every fit and comparison relies on: rows in a schema this gpucal knows, and ok rows
// whose numbers are measurements, never nan, inf, a sign error or a size of 1e300.
void check_rows(const CsvTable& t) {
  const bool versioned = t.has_column("schema_version");
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    const std::string where = t.source() + ":" + std::to_string(t.line_of(r)) + ": ";
    const int64_t version = versioned ? t.get_int(r, "schema_version") : kOldestCsvSchemaVersion;
    if (version < kOldestCsvSchemaVersion || version > kNewestCsvSchemaVersion)
      throw CsvError(where + "schema_version " + t.get_string(r, "schema_version") + ", this gpucal reads " +
                     std::to_string(kOldestCsvSchemaVersion) + " to " + std::to_string(kNewestCsvSchemaVersion));
    if (t.get_string(r, "status") != "ok") continue;
    for (const auto& [column, range] : checked_columns())
      if (t.has_column(column)) check_cell(t, r, column, range, where);
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

constexpr const char* kPartial = ".partial";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// FILE.csv (or FILE.csv.partial) and its sidecar FILE.json and samples FILE.samples.csv, each
// with the same suffix.
BenchResults load_bench(const std::string& bench, const fs::path& csv, const std::string& suffix,
                        bool allow_suspect, ResultsDir& dir) {
  std::vector<std::string>& warnings = dir.warnings;
  BenchResults results{bench, CsvTable::read_file(csv.string()), {}, {}, nullptr, std::nullopt};
  results.table.require_columns(common_columns());
  check_rows(results.table);
  warnings.insert(warnings.end(), results.table.warnings().begin(), results.table.warnings().end());
  sort_ok_rows(results, allow_suspect, dir.suspect_notes);
  std::string stem = csv.string();
  stem.erase(stem.size() - std::string(".csv").size() - suffix.size());
  const fs::path sidecar = stem + ".json" + suffix;
  if (fs::exists(sidecar)) {
    if (const std::string why = not_a_regular_file(sidecar.string()); !why.empty())
      throw std::runtime_error(sidecar.string() + ": " + why);
    std::ifstream in(sidecar);
    std::stringstream text;
    text << in.rdbuf();
    try {
      results.sidecar = parse_json_unique_keys(text.str());
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(sidecar.string() + ": malformed JSON: " + json_parse_error_text(e));
    } catch (const DuplicateKeyError& e) {
      throw std::runtime_error(sidecar.string() + ": " + e.what());
    }
  }
  const fs::path samples = stem + ".samples.csv" + suffix;
  if (fs::exists(samples)) results.samples_by_point = read_samples_file(samples.string(), &warnings);
  return results;
}

// An interrupted run's rows, named explicitly: one bench, the one its rows name.
ResultsDir load_partial_file(const std::string& path, bool allow_suspect) {
  ResultsDir dir;
  dir.path = path;
  const CsvTable table = CsvTable::read_file(path);
  table.require_columns({"bench"});
  if (table.row_count() == 0) throw std::runtime_error(path + ": no row (the run stopped before its first point)");
  const std::string bench = table.get_string(0, "bench");
  if (std::find(known_benches().begin(), known_benches().end(), bench) == known_benches().end())
    throw CsvError(path + ":" + std::to_string(table.line_of(0)) + ": column 'bench': '" + bench +
                   "' is not a bench gpucal fits");
  dir.benches.emplace(bench, load_bench(bench, path, kPartial, allow_suspect, dir));
  return dir;
}

}  // namespace

ResultsDir load_results_dir(const std::string& path, bool allow_suspect) {
  if (ends_with(path, std::string(".csv") + kPartial) && fs::is_regular_file(path))
    return load_partial_file(path, allow_suspect);
  if (!fs::is_directory(path)) throw std::runtime_error(path + ": not a directory");
  ResultsDir dir;
  dir.path = path;
  std::vector<std::string> partial;
  for (const auto& bench : known_benches()) {
    const fs::path csv = fs::path(path) / (bench + ".csv");
    if (fs::exists(fs::path(csv.string() + kPartial))) partial.push_back(csv.string() + kPartial);
    if (!fs::exists(csv)) continue;
    dir.benches.emplace(bench, load_bench(bench, csv, "", allow_suspect, dir));
  }
  for (const auto& p : partial)
    dir.warnings.push_back(p + ": rows of an interrupted run, not read (name that file to read them)");
  if (dir.benches.empty())
    throw std::runtime_error(path + ": no gemm.csv, attention.csv, collectives.csv, p2p.csv or memory.csv" +
                             (partial.empty() ? std::string()
                                              : " (an interrupted run left " + partial.front() +
                                                    ": name that file to read its rows)"));
  return dir;
}

std::string default_calibration_path(const std::string& results) {
  if (ends_with(results, std::string(".csv") + kPartial) && fs::is_regular_file(results))
    return results.substr(0, results.size() - std::string(".csv").size() - std::string(kPartial).size()) +
           ".partial.calibration.json";
  return (fs::path(results) / "calibration.json").string();
}

}  // namespace gpucal::calibration
