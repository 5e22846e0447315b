// Imported runs -> a results folder in gpucal's schema: collectives.csv, p2p.csv, gemm.csv through
// the benches' own CsvSink and column lists, each with a JSON sidecar naming the source files,
// their command lines and hardware lines, and what could not be known. The folder appears whole
// or not at all: it is written beside the target and renamed into place.
#pragma once

#include <string>
#include <vector>

#include "app/import/import_log.h"

namespace gpucal::calibration {

struct ImportSummary {
  int collective_rows = 0;
  int p2p_rows = 0;
  int gemm_rows = 0;
  std::vector<std::string> messages;  // one line per run, then warnings
};

// Throws std::runtime_error when out_dir exists and is not empty, or a file cannot be written
// (the partial folder is removed). `command_line` is recorded in the sidecars.
ImportSummary write_imported_results(const std::vector<ImportedRun>& runs, const std::string& out_dir,
                                     const std::vector<std::string>& command_line);

}  // namespace gpucal::calibration
