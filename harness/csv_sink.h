// The calibration CSV: a fixed column set chosen before the first row (never inferred from
// it), schema_version in every row, each row written and flushed as its point finishes.
// Per-sample times go to a second, long-format file (point, sample, time_us) for
// distribution-aware comparisons.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "harness/row.h"

namespace gpucal {

constexpr int kCsvSchemaVersion = 1;

// Columns every bench writes first, in this order (documented in results/SCHEMA.md).
const std::vector<std::string>& common_columns();

std::string csv_escape(const std::string& cell);

class CsvSink {
 public:
  // Throws UsageError when the file cannot be created. `bench_columns` follow the common ones.
  CsvSink(const std::string& path, const std::vector<std::string>& bench_columns);
  void write(const Row& row);  // throws std::logic_error for a cell outside the schema
  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> columns_;
  std::ofstream out_;
};

class SamplesSink {
 public:
  explicit SamplesSink(const std::string& path);
  void write(const std::string& point, const std::vector<double>& sample_seconds);

 private:
  std::ofstream out_;
};

// "dir/run.csv" -> "dir/run.json" / "dir/run.samples.csv".
std::string sidecar_path(const std::string& csv_path, const std::string& suffix);

}  // namespace gpucal
