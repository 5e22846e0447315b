#include "results_dir.h"

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

ResultsDir load_results_dir(const std::string& path) {
  if (!fs::is_directory(path)) throw std::runtime_error(path + ": not a directory");
  ResultsDir dir;
  dir.path = path;
  for (const auto& bench : known_benches()) {
    const fs::path csv = fs::path(path) / (bench + ".csv");
    if (!fs::exists(csv)) continue;
    BenchResults results{bench, CsvTable::read_file(csv.string()), {}, nullptr, std::nullopt};
    results.table.require_columns(common_columns());
    for (std::size_t r = 0; r < results.table.row_count(); ++r)
      if (results.table.get_string(r, "status") == "ok") results.ok_rows.push_back(r);
    const fs::path sidecar = fs::path(path) / (bench + ".json");
    if (fs::exists(sidecar)) {
      std::ifstream in(sidecar);
      try {
        results.sidecar = nlohmann::json::parse(in);
      } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(sidecar.string() + ": malformed JSON: " + e.what());
      }
    }
    const fs::path samples = fs::path(path) / (bench + ".samples.csv");
    if (fs::exists(samples)) results.samples_by_point = read_samples_file(samples.string());
    dir.benches.emplace(bench, std::move(results));
  }
  if (dir.benches.empty())
    throw std::runtime_error(path + ": no gemm.csv, attention.csv, collectives.csv, p2p.csv or memory.csv");
  return dir;
}

}  // namespace gpucal::calibration
