// A results folder as the benches leave it: <bench>.csv (+ <bench>.json sidecar,
// + <bench>.samples.csv) for bench in gemm, attention, collectives, p2p, memory; any subset.
// An interrupted run leaves <bench>.csv.partial (and its companions) instead: read by name.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/common/csv_table.h"

namespace gpucal::calibration {

inline const std::vector<std::string>& known_benches() {
  static const std::vector<std::string> benches{"gemm", "attention", "collectives", "p2p", "memory"};
  return benches;
}

struct BenchResults {
  std::string bench;
  CsvTable table;
  std::vector<std::size_t> ok_rows;       // rows with status == ok (the only ones fits use), less suspect ones
  std::vector<std::size_t> suspect_rows;  // ok rows whose `suspect` cell names a reason
  nlohmann::json sidecar;            // null when FILE.json is absent
  std::optional<std::map<std::string, std::vector<double>>> samples_by_point;  // FILE.samples.csv
};

struct ResultsDir {
  std::string path;
  std::map<std::string, BenchResults> benches;  // by bench name
  std::vector<std::string> warnings;            // torn last lines dropped ("file:line: ...")
  std::vector<std::string> suspect_notes;       // per CSV: its suspect rows, left out of fits or used
  const BenchResults* find(const std::string& bench) const {
    auto it = benches.find(bench);
    return it == benches.end() ? nullptr : &it->second;
  }
};

// `path` is a results folder, or the FILE.csv.partial an interrupted run left (read with its
// FILE.json.partial and FILE.samples.csv.partial; its rows name the bench). A folder's
// *.csv.partial files are not read: a warning names them.
// Throws std::runtime_error when the folder is missing or holds none of the bench CSVs,
// CsvError when a CSV is malformed or lacks the common columns, when a row's schema_version
// is not one this gpucal reads, or when an ok row has a time that is not a positive finite
// number (the message names file, line and column). Ok rows with a `suspect` reason are left
// out of ok_rows unless `allow_suspect` (either way suspect_notes counts them).
ResultsDir load_results_dir(const std::string& path, bool allow_suspect = false);

// Where `gpucal fit` writes by default: RESULTS/calibration.json, or FILE.partial.calibration.json
// beside an interrupted run's FILE.csv.partial.
std::string default_calibration_path(const std::string& results);

// Columns every bench writes (the common block of the CSV schema).
const std::vector<std::string>& common_columns();

}  // namespace gpucal::calibration
