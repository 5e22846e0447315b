// Communication calibration: groups the ok rows of collectives.csv by
// (collective, dtype, nranks, ranks_per_node, nnodes) and of p2p.csv (patterns other than
// 'copy') by (pattern, direction, link_class, spans_nodes), and fits each group with every form
// of comm_forms.h (alpha_beta, sigmoid, piecewise, regime, table), each with its every-3rd-size
// held-out error and its leave-one-out error; the log-log interpolation baseline gets the same
// errors, and `best` names the form with the lowest cross-validated error and why, with the
// held-out error of that choice made on the training sizes alone (cv_selection.h). Output is the
// JSON of calibration.json's "communication" section (documented in results/SCHEMA.md).
#pragma once
#include <nlohmann/json.hpp>

#include "app/common/results_dir.h"

namespace gpucal::calibration {

// {"collectives": [group...], "p2p": [group...]}; a group's fits that could not be made
// carry {"error": reason} instead of parameters.
nlohmann::json fit_communication(const ResultsDir& results);

}  // namespace gpucal::calibration
