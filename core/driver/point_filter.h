// Which points a run measures: Google Benchmark's filter (--benchmark_filter or its
// environment variable) applied to the points' names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/driver/op.h"

namespace gpucal {

// Google Benchmark filter semantics (a regex; a leading '-' negates) for the progress count.
bool matches_filter(const std::string& name, const std::string& filter);

// Throws UsageError when the filter is not a valid regular expression.
void check_filter(const std::string& filter);

// The number of ops the filter selects. A run that would measure no point is bad input
// (UsageError), decided before --out's files are opened: an existing CSV, its samples and its
// sidecar stay as they were. `source` names where the filter came from.
int count_selected(const std::vector<std::unique_ptr<Op>>& ops, const std::string& filter,
                   const std::string& source);

}  // namespace gpucal
