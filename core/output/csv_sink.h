// The calibration CSV: a fixed column set chosen before the first row (never inferred from
// it), schema_version in every row, each row written and flushed as its point finishes.
// Per-sample times go to a second, long-format file (point, sample, time_us, repetition) for
// distribution-aware comparisons. Both are staged AppendFiles (core/output/file_io.h): they
// grow under X.partial and close() renames them onto X, so X is never a partial file; a row,
// and a point's samples, are each one write of whole lines, every write is checked, and the
// CSV is locked so a second run with the same --out is refused.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/output/csv_format.h"
#include "core/output/file_io.h"
#include "core/output/row.h"

namespace gpucal {

// 2 added `suspect` and `process_run` after `throttle_reasons`; readers take 1 and 2.
constexpr int kCsvSchemaVersion = 2;

// Columns every bench writes first, in this order (documented in results/SCHEMA.md).
// `process_run` is written 0 when a row leaves it unset (gpucal run --repeat-process merges
// several processes' rows and numbers them).
const std::vector<std::string>& common_columns();

class CsvSink {
 public:
  // Throws UsageError when the file cannot be created or another run holds it.
  // `bench_columns` follow the common ones.
  CsvSink(const std::string& path, const std::vector<std::string>& bench_columns);
  // Throws std::logic_error for a cell outside the schema, WriteError when writing fails.
  void write(const Row& row);
  void finish() { out_.finish(); }    // syncs and closes under the partial name; throws WriteError
  void close() { out_.close(); }      // finish(), then renames the file into place; throws WriteError
  void discard() { out_.discard(); }  // removes the partial file (not once closed)
  int rows() const { return rows_; }
  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& path() const { return out_.path(); }
  const std::string& written_path() const { return out_.written_path(); }

 private:
  std::vector<std::string> columns_;
  AppendFile out_;
  int rows_ = 0;
};

class SamplesSink {
 public:
  explicit SamplesSink(const std::string& path);  // throws UsageError
  // All of a point's samples in one write; throws WriteError.
  void write(const std::string& point, int repetition, const std::vector<double>& sample_seconds);
  void finish() { out_.finish(); }  // as CsvSink's
  void close() { out_.close(); }
  void discard() { out_.discard(); }
  const std::string& written_path() const { return out_.written_path(); }

 private:
  AppendFile out_;
};

// "dir/run.csv" -> "dir/run.json" / "dir/run.samples.csv".
std::string sidecar_path(const std::string& csv_path, const std::string& suffix);

}  // namespace gpucal
