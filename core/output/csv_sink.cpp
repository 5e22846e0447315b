#include "core/output/csv_sink.h"

#include <filesystem>
#include <set>
#include <stdexcept>

#include "core/errors.h"

namespace gpucal {

const std::vector<std::string>& common_columns() {
  static const std::vector<std::string> cols = {
      "schema_version", "bench",          "impl",          "backend",         "device",
      "point",          "repetition",     "status",        "status_detail",   "regime",
      "samples",        "launches_per_sample", "combine",  "converged",       "stop_reason",
      "sampling_time_s", "time_us_median", "time_us_p10",  "time_us_p90",     "time_us_min",
      "time_us_max",    "time_us_mean",   "time_us_stdev", "noise_rel",       "verified",
      "max_rel_err",    "sm_clock_mhz",   "mem_clock_mhz", "power_w",         "temp_c",
      "throttle_reasons", "suspect",      "process_run",
  };
  return cols;
}

namespace {

// Opening errors are bad input (exit 2): the --out path, or another run holding it. The file's
// folder is made when absent, as gpucal run and import make theirs.
AppendFile open_output(const std::string& path, AppendFile::Lock lock) {
  try {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty() && !std::filesystem::exists(parent, ec)) std::filesystem::create_directories(parent, ec);
    return AppendFile(path, lock, AppendFile::Staging::partial);
  } catch (const OpenError& e) {
    throw UsageError(e.what());
  }
}

std::vector<std::string> with_common(const std::vector<std::string>& bench_columns) {
  std::vector<std::string> columns = common_columns();
  std::set<std::string> seen(columns.begin(), columns.end());
  for (const auto& c : bench_columns)
    if (seen.insert(c).second) columns.push_back(c);
  return columns;
}

}  // namespace

CsvSink::CsvSink(const std::string& path, const std::vector<std::string>& bench_columns)
    : columns_(with_common(bench_columns)), out_(open_output(path, AppendFile::Lock::exclusive)) {
  try {
    out_.append(csv_record(columns_));
  } catch (...) {
    out_.discard();  // a full disk leaves no empty file behind
    throw;
  }
}

void CsvSink::write(const Row& row) {
  std::set<std::string> known(columns_.begin(), columns_.end());
  for (const auto& kv : row.cells())
    if (!known.count(kv.first)) throw std::logic_error("row cell '" + kv.first + "' is not in the CSV schema");
  std::vector<std::string> cells;
  for (const auto& column : columns_)
    cells.push_back(column == "schema_version"                    ? std::to_string(kCsvSchemaVersion)
                    : column == "process_run" && !row.has(column) ? "0"  // one process unless merged
                                                                  : row.get(column));
  out_.append(csv_record(cells));  // one write: a crash later loses nothing measured, and no half row
  ++rows_;
}

SamplesSink::SamplesSink(const std::string& path) : out_(open_output(path, AppendFile::Lock::none)) {
  try {
    out_.append("point,sample,time_us,repetition\n");
  } catch (...) {
    out_.discard();
    throw;
  }
}

void SamplesSink::write(const std::string& point, int repetition, const std::vector<double>& sample_seconds) {
  std::string block;
  const std::string key = csv_escape(point);
  const std::string rep = std::to_string(repetition);
  for (size_t i = 0; i < sample_seconds.size(); ++i)
    block += key + "," + std::to_string(i) + "," + format_number(sample_seconds[i] * 1e6) + "," + rep + "\n";
  out_.append(block);
}

std::string sidecar_path(const std::string& csv_path, const std::string& suffix) {
  const std::string ext = ".csv";
  if (csv_path.size() > ext.size() && csv_path.compare(csv_path.size() - ext.size(), ext.size(), ext) == 0)
    return csv_path.substr(0, csv_path.size() - ext.size()) + suffix;
  return csv_path + suffix;
}

}  // namespace gpucal
