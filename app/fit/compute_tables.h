// Compute calibration tables from the ok rows: GEMM best throughput and efficiency step
// tables per dtype, attention efficiency by sequence length and head dim. Output goes into
// calibration.json's "compute" section (results/SCHEMA.md); "memory" is memory_tables.h.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/common/results_dir.h"

namespace gpucal::calibration {

// Calculon's descending step table: entries [threshold, eff] sorted by threshold
// descending; a consumer takes the first entry whose threshold <= its op size.
using StepTable = std::vector<std::pair<double, double>>;

// Buckets (x, eff) pairs by floor(log2 x) and takes each bucket's median eff; the
// threshold is the bucket's lower edge 2^floor(log2 x). Descending by threshold.
StepTable step_table_by_log2_bucket(const std::vector<std::pair<double, double>>& x_eff);

// The table as JSON: [[threshold, eff], ...].
nlohmann::json step_table_json(const StepTable& table);

// The result of a lookup in a descending step table, nullopt when x is below every threshold.
std::optional<double> step_lookup(const StepTable& table, double x);

// The accumulation an fp8 GEMM row measured on Hopper (the device name or XLA key: H100, H200, H800,
// H20, GH200, sm_90), where cuBLASLt's fp8 has the two modes: "fast" for XLA's tables (impl
// xla-table...: XLA sets CUBLASLT_MATMUL_DESC_FAST_ACCUM on an fp8 dot of DEFAULT precision,
// xla/stream_executor/cuda/cuda_blas_lt.cc's GetMatmulPlan, and its table generator's dots carry no
// precision: DEFAULT), "split" for bench_gemm's cuBLASLt rows (it leaves FAST_ACCUM at cuBLASLt's
// default, 0: promoted to FP32), "" for anything else or another device (not known, or no such
// choice: Blackwell's fp8 has no fast mode). gemm_tables writes compute.gemm.<fp8 dtype>.accumulation
// where every shape's row agrees.
std::string fp8_accumulation_of(const std::string& impl, const std::string& backend, const std::string& device);

// Appends messages about excluded rows (e.g. efficiency above peak) to `warnings`.
nlohmann::json gemm_tables(const BenchResults& gemm, std::vector<std::string>& warnings);
nlohmann::json attention_tables(const BenchResults& attention, std::vector<std::string>& warnings);

}  // namespace gpucal::calibration
