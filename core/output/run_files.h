// The files of one bench run with --out X.csv: its rows (X.csv), their per-sample times
// (X.samples.csv) and its sidecar (X.json). While the run goes they are X.csv.partial,
// X.samples.csv.partial and X.json.partial: each row is written whole as its point finishes,
// so a killed run keeps every finished row there (`gpucal fit X.csv.partial` reads them).
// commit() renames them into place, rows last, so X.csv and its companions are the previous
// run's until this run is complete: a rerun that fails (a full disk) leaves them byte for byte.
// A run that ends without commit() keeps its partial files when they hold a row and removes
// them when they hold none: no empty file is left behind.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/output/csv_sink.h"
#include "core/output/row.h"

namespace gpucal {

using Summaries = std::vector<std::pair<std::string, std::string>>;

class RunFiles {
 public:
  // Opens the partial files and writes `sidecar_json` to X.json.partial. Throws UsageError when
  // a file cannot be created or another run holds X.csv, WriteError when the first bytes cannot
  // be written (nothing is left behind then).
  RunFiles(const std::string& csv_path, const std::vector<std::string>& bench_columns,
           const std::string& sidecar_json);
  ~RunFiles();
  RunFiles(const RunFiles&) = delete;
  RunFiles& operator=(const RunFiles&) = delete;

  // The point's samples (when it has any), then its row: a row on disk has its samples
  // before it. Throws WriteError.
  void write(const Row& row, const std::vector<double>* sample_seconds);
  // Writes the final sidecar and the run's summaries ({suffix, content}: X.best.csv) and
  // renames every file into place. Throws WriteError; the partial files then stay.
  void commit(const std::string& sidecar_json, const Summaries& summaries = {});
  int rows() const { return csv_->rows(); }
  // Where an unfinished run's rows are, for its error line.
  std::string leftover() const;

 private:
  std::string csv_path_, sidecar_path_;
  std::unique_ptr<CsvSink> csv_;
  std::unique_ptr<SamplesSink> samples_;
  bool committed_ = false;
};

}  // namespace gpucal
