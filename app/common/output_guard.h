// Output paths checked against what a command reads, before any work: a report or a fit
// written over a bench's table would lose measured results (exit 2 instead).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace gpucal::calibration {

// Throws std::invalid_argument when `out_path` (the value of `flag`) names a file of one of
// `input_folders` that the command reads: any *.csv (the benches' tables, samples, best
// picks), a *.json beside a *.csv of the same stem (its sidecar), and calibration.json when
// `reads_calibration_json`; for an input that is an interrupted run's FILE.csv.partial, any
// *.partial beside it. Symbolic links and `..` are resolved first.
void refuse_output_over_inputs(const std::string& flag, const std::string& out_path,
                               const std::vector<std::string>& input_folders, bool reads_calibration_json);

// Throws std::invalid_argument when two of the (flag, path) outputs name the same file (empty
// paths are not given and are skipped).
void refuse_shared_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// What a command reads: input files (an expectations file, a history, a log) and input folders
// (results folders, fleet folders).
struct CommandInputs {
  std::vector<std::string> files;
  std::vector<std::string> folders;
  bool reads_calibration_json = false;
};

// The one rule every verb applies to its output flags before any work (exit 2, inputs
// untouched): an output may not name an input file, nor a file the command reads anywhere under
// an input folder (a *.csv or *.partial, a *.json beside a *.csv of its stem, fleet.json,
// calibration.json when `reads_calibration_json`), nor the same file as another output. Symbolic
// links and `..` are resolved first.
void refuse_outputs_over_inputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                                const CommandInputs& inputs);

}  // namespace gpucal::calibration
