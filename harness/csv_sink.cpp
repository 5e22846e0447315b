#include "harness/csv_sink.h"

#include <set>
#include <stdexcept>

#include "harness/errors.h"

namespace gpucal {

const std::vector<std::string>& common_columns() {
  static const std::vector<std::string> cols = {
      "schema_version", "bench",         "impl",          "backend",       "device",        "point",
      "status",         "status_detail", "regime",        "samples",       "launches_per_sample",
      "converged",      "time_us_median", "time_us_p10",  "time_us_p90",   "time_us_min",   "time_us_max",
      "time_us_mean",   "time_us_stdev", "noise_rel",     "verified",      "max_rel_err",
      "sm_clock_mhz",   "mem_clock_mhz", "power_w",       "temp_c",        "throttle_reasons",
  };
  return cols;
}

std::string csv_escape(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

CsvSink::CsvSink(const std::string& path, const std::vector<std::string>& bench_columns) : path_(path) {
  columns_ = common_columns();
  std::set<std::string> seen(columns_.begin(), columns_.end());
  for (const auto& c : bench_columns)
    if (seen.insert(c).second) columns_.push_back(c);
  out_.open(path, std::ios::out | std::ios::trunc);
  if (!out_) throw UsageError("cannot write '" + path + "'");
  for (size_t i = 0; i < columns_.size(); ++i) out_ << (i ? "," : "") << columns_[i];
  out_ << "\n" << std::flush;
}

void CsvSink::write(const Row& row) {
  std::set<std::string> known(columns_.begin(), columns_.end());
  for (const auto& kv : row.cells())
    if (!known.count(kv.first)) throw std::logic_error("row cell '" + kv.first + "' is not in the CSV schema");
  for (size_t i = 0; i < columns_.size(); ++i) {
    std::string cell = columns_[i] == "schema_version" ? std::to_string(kCsvSchemaVersion) : row.get(columns_[i]);
    out_ << (i ? "," : "") << csv_escape(cell);
  }
  out_ << "\n" << std::flush;  // a crash later loses nothing measured
}

SamplesSink::SamplesSink(const std::string& path) : out_(path, std::ios::out | std::ios::trunc) {
  if (!out_) throw UsageError("cannot write '" + path + "'");
  out_ << "point,sample,time_us\n" << std::flush;
}

void SamplesSink::write(const std::string& point, const std::vector<double>& sample_seconds) {
  for (size_t i = 0; i < sample_seconds.size(); ++i)
    out_ << csv_escape(point) << "," << i << "," << format_number(sample_seconds[i] * 1e6) << "\n";
  out_ << std::flush;
}

std::string sidecar_path(const std::string& csv_path, const std::string& suffix) {
  const std::string ext = ".csv";
  if (csv_path.size() > ext.size() && csv_path.compare(csv_path.size() - ext.size(), ext.size(), ext) == 0)
    return csv_path.substr(0, csv_path.size() - ext.size()) + suffix;
  return csv_path + suffix;
}

}  // namespace gpucal
