// Where a run's rows go: on rank 0 with --out, the calibration CSV, its per-sample file and
// the JSON sidecar (written at the start, rewritten with the totals at the end). The first
// failed write (disk full, I/O error) stops the run: later points are not measured, since
// their rows could not be kept. Rows written before it are whole.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/driver/run_config.h"
#include "core/measure/measurement.h"
#include "core/measure/watchdog.h"
#include "core/output/csv_sink.h"
#include "core/output/metadata.h"
#include "core/output/row.h"

namespace gpucal {

struct RunTally;

class RunSinks {
 public:
  // Opens the CSV and samples files and writes the sidecar of the run's start, when `write`
  // (rank 0 with --out, not listing). Throws UsageError or WriteError.
  void open(const RunConfig& config, const std::vector<std::string>& columns, const Metadata& meta,
            bool write);
  // Samples first: a CSV row is the commit, and its samples are already there. Does nothing
  // after a failed write.
  void write(const Row& row, const Measurement* m);
  // The first failed write's message; "" while every write succeeded.
  const std::string& write_failure() const { return write_failure_; }
  // Ends the run's files: the sidecar with its totals (a failed write keeps the sidecar of the
  // run's start: write_file_atomic), then the CSV and samples closed. Returns the exit code:
  // 1 after a failed point or write, else 0.
  int finish(Metadata& meta, const RunTally& tally, Watchdog& watchdog);

 private:
  std::unique_ptr<CsvSink> csv_;
  std::unique_ptr<SamplesSink> samples_;
  std::string json_path_, write_failure_;
};

}  // namespace gpucal
