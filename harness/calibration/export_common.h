// Shared pieces of the exporters (export_calculon/astrasim/nersc/vtrain.cpp). Exporters
// read a calibration.json document (calibration_json.h) and write files for one consumer.
// They never invent numbers: a field they cannot estimate from the document is written as
// null (or left out where the consumer has no null) and named in ExportReport::unfilled.
//
// Network tiers: "intra-node" = collective groups with spans_nodes == 0, "inter-node" =
// spans_nodes == 1. A tier's bandwidth is the α–β fit's beta_gbps (saturation BUS bandwidth,
// GB = 1e9 B), its latency the fit's alpha_us; allreduce is preferred, then the group with
// the most ranks. Because these are achieved figures, efficiencies next to them are 1.0.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpucal::calibration {

struct ExportReport {
  std::string consumer;
  std::vector<std::string> files_written;
  std::vector<std::string> unfilled;  // "field: why"
  std::vector<std::string> notes;     // what was estimated from what
};

ExportReport export_calculon(const nlohmann::json& calibration, const std::string& out_dir);
ExportReport export_astrasim(const nlohmann::json& calibration, const std::string& out_dir);
ExportReport export_nersc(const nlohmann::json& calibration, const std::string& out_dir);
ExportReport export_vtrain(const nlohmann::json& calibration, const std::string& out_dir);

// target: calculon | astrasim | nersc | vtrain | all. Each consumer writes under out_dir/<consumer>/.
std::vector<ExportReport> export_to(const nlohmann::json& calibration, const std::string& target,
                                    const std::string& out_dir);
const std::vector<std::string>& export_targets();
std::string format_export_report(const ExportReport& report);

// ---- helpers shared by the exporters ----

struct NetworkTier {
  nlohmann::json group;  // the chosen communication.collectives[] entry
  double alpha_us = 0, beta_gbps = 0;
  int64_t tier_size = 0;  // GPUs in the tier: ranks_per_node (intra) or nranks (inter)
  std::string describe() const;
};
// spans_nodes: 0 intra-node, 1 inter-node. nullopt when no group with a usable α–β fit.
std::optional<NetworkTier> select_network_tier(const nlohmann::json& calibration, int spans_nodes);

// One-way point-to-point latency, µs: α / 2 of the pingpong α–β fit (its times are round
// trips; half is osu_latency's latency), else α of another pattern's fit (sendrecv
// preferred: the per-message time of a stream of messages). `pattern` names the group used.
struct P2pLatency {
  double us = 0;
  std::string pattern;
};
std::optional<P2pLatency> p2p_latency(const nlohmann::json& calibration, int spans_nodes);

// GEMM dtype used for "the" matrix throughput: bf16, then fp16, then whatever has rows.
std::optional<std::string> preferred_matrix_dtype(const nlohmann::json& calibration);
// Our dtype names -> Calculon / nccl-tests names.
std::string calculon_dtype_name(const std::string& dtype);
std::string nccl_type_name(const std::string& dtype);
std::optional<int> dtype_size_bytes(const std::string& dtype);

// The device's memory bandwidth (GB/s) from calibration.json's memory section:
// device_bandwidth_gbps (bench_memory's copy plateau beyond the caches, else bench_p2p's best
// d2d copy), with its step table by MB (copy_MB_efficiency, else d2d_copy's MB_efficiency);
// documents written before device_bandwidth_gbps existed fall back to d2d_copy.best_gbps.
struct MemoryBandwidth {
  double gbps = 0;
  std::string source;
  nlohmann::json mb_efficiency;  // null when none
};
std::optional<MemoryBandwidth> memory_bandwidth(const nlohmann::json& calibration);
// bench_memory's fma_chain rate for a dtype (memory.vector.<dtype>): best TFLOP/s and the
// vector peak (null when unknown).
struct VectorRate {
  double best_tflops = 0;
  nlohmann::json peak_tflops;
};
std::optional<VectorRate> vector_rate(const nlohmann::json& calibration, const std::string& dtype);

// Device memory capacity in GiB found in the run metadata (sidecar keys such as
// memory_total_bytes, total_memory_gib); nullopt when no sidecar recorded it.
std::optional<double> device_memory_gib(const nlohmann::json& calibration);

// Calculon-style step table with its smallest threshold set to 0, so every op size matches.
nlohmann::json step_table_floor_zero(const nlohmann::json& table);

std::string ensure_dir(const std::string& out_dir, const std::string& sub);
void write_text_file(const std::string& path, const std::string& text);

}  // namespace gpucal::calibration
