// Where a run's rows go: on rank 0 with --out, the calibration CSV, its per-sample file and
// the JSON sidecar, staged as partial files and renamed into place when the run is complete
// (core/output/run_files.h). The first failed write (disk full, I/O error) stops the run:
// later points are not measured, since their rows could not be kept. Rows written before it
// are whole, and the previous run's files stay as they were.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/driver/run_config.h"
#include "core/measure/measurement.h"
#include "core/measure/watchdog.h"
#include "core/output/metadata.h"
#include "core/output/row.h"
#include "core/output/run_files.h"

namespace gpucal {

struct RunTally;

class RunSinks {
 public:
  // Opens the partial files with the sidecar of the run's start, when `write` (rank 0 with
  // --out, not listing). Throws UsageError or WriteError.
  void open(const RunConfig& config, const std::vector<std::string>& columns, const Metadata& meta,
            bool write);
  // Samples first: a CSV row is the commit, and its samples are already there. Does nothing
  // after a failed write.
  void write(const Row& row, const Measurement* m);
  // The first failed write's message; "" while every write succeeded.
  const std::string& write_failure() const { return write_failure_; }
  // Ends the run's files: the sidecar with its totals and the run's summaries, everything
  // renamed into place (a failed write leaves the partial files and the earlier result).
  // Returns the exit code: 1 after a failed point or write, else 0.
  int finish(Metadata& meta, const RunTally& tally, Watchdog& watchdog, const Summaries& summaries);
  // Where an unfinished run's rows are, for its error line.
  std::string leftover() const;

 private:
  std::unique_ptr<RunFiles> files_;
  std::string json_path_, write_failure_;
};

}  // namespace gpucal
