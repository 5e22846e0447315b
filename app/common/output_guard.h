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

}  // namespace gpucal::calibration
