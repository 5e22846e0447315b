// Compute and memory figures the exporters take from calibration.json (or from --set), each
// with where it came from, so a report can say what was measured and what was supplied.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/export/export_settings.h"

namespace gpucal::calibration {

struct Figure {
  double value = 0;
  std::string source;  // "measured: ..." or "--set key"
  bool by_hand = false;
};

// Device memory bandwidth, GB/s, read + write bytes counted (STREAM's convention): --set
// memory_gbps, else the best p2p 'copy' d2d bandwidth (bench_p2p counts read + write for d2d).
std::optional<Figure> memory_bandwidth_gbps(const nlohmann::json& calibration,
                                            const ExportSettings& settings);
// Calculon-style [[MB, efficiency], ...] for that bandwidth, smallest threshold 0; a single
// [[0, 1.0]] when the bandwidth was set by hand or has no per-size table.
nlohmann::json memory_mb_efficiency(const nlohmann::json& calibration, const ExportSettings& settings);

// Device memory capacity, GiB: --set memory_gib, else the first sidecar's device.memory_bytes.
std::optional<Figure> device_memory_gib(const nlohmann::json& calibration, const ExportSettings& settings);

// Non-tensor (vector) throughput, TFLOP/s, of the first of `dtypes` measured: --set
// vector_tflops, else memory.vector.<dtype>.best_tflops (bench_memory's fma_chain); the source
// names the dtype taken.
std::optional<Figure> vector_tflops(const nlohmann::json& calibration, const ExportSettings& settings,
                                    const std::vector<std::string>& dtypes);

// The same three where a consumer requires them: nullopt after appending to `refused` the one-line
// refusal for the consumer's `field`, naming the bench that measures it and the --set key.
std::optional<Figure> require_memory_bandwidth(const nlohmann::json& calibration,
                                               const ExportSettings& settings, const std::string& field,
                                               std::vector<std::string>& refused);
std::optional<Figure> require_device_memory(const nlohmann::json& calibration, const ExportSettings& settings,
                                            const std::string& field, std::vector<std::string>& refused);
std::optional<Figure> require_vector_tflops(const nlohmann::json& calibration, const ExportSettings& settings,
                                            const std::vector<std::string>& dtypes, const std::string& field,
                                            std::vector<std::string>& refused);

// GPUs per node: --set gpus_per_node, else the largest measured ranks_per_node; gpus 0 when neither.
struct NodeSize {
  int64_t gpus = 0;
  std::string source;
};
NodeSize gpus_per_node(const nlohmann::json& calibration, const ExportSettings& settings);

// GEMM dtype used for "the" matrix throughput: bf16, then fp16, then whatever has rows.
std::optional<std::string> preferred_matrix_dtype(const nlohmann::json& calibration);

// The GEMM a single-rate consumer is calibrated on: of the measured shapes of `dtype` whose
// time is at least kReferenceGemmMinUs, the one with the highest achieved TFLOP/s (the large
// GEMMs of a training step); when none is that long, the fastest shape overall.
constexpr double kReferenceGemmMinUs = 40.0;
struct ReferenceGemm {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double flops = 0;    // 2·m·n·k·batch (bench_gemm's count)
  double time_us = 0;  // flops / achieved rate
  double tflops = 0;   // achieved
  std::string point;
  std::string describe() const;
};
std::optional<ReferenceGemm> reference_gemm(const nlohmann::json& calibration, const std::string& dtype);

// Calculon-style step table with its smallest threshold set to 0, so every op size matches.
nlohmann::json step_table_floor_zero(const nlohmann::json& table);

}  // namespace gpucal::calibration
