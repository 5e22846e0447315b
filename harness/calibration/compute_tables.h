// Compute calibration tables from the ok rows: GEMM best throughput and efficiency step
// tables per dtype, memory-bandwidth efficiency by size (p2p 'copy' D2D rows), attention
// efficiency by sequence length and head dim. Output goes into calibration.json's
// "compute" and "memory" sections (documented in README_SECTION.md).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "results_dir.h"

namespace gpucal::calibration {

// Calculon's descending step table: entries [threshold, eff] sorted by threshold
// descending; a consumer takes the first entry whose threshold <= its op size.
using StepTable = std::vector<std::pair<double, double>>;

// Buckets (x, eff) pairs by floor(log2 x) and takes each bucket's median eff; the
// threshold is the bucket's lower edge 2^floor(log2 x). Descending by threshold.
StepTable step_table_by_log2_bucket(const std::vector<std::pair<double, double>>& x_eff);

// The result of a lookup in a descending step table, nullopt when x is below every threshold.
std::optional<double> step_lookup(const StepTable& table, double x);

// Appends messages about excluded rows (e.g. efficiency above peak) to `warnings`.
nlohmann::json gemm_tables(const BenchResults& gemm, std::vector<std::string>& warnings);
nlohmann::json memory_tables(const BenchResults& p2p);
nlohmann::json attention_tables(const BenchResults& attention, std::vector<std::string>& warnings);

}  // namespace gpucal::calibration
