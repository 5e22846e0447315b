// The hardware exporters' workload-aware fields (app/export/workload_fit.h), one function per
// tool, called by its exporter after it has filled its reference-shape fields and only when
// `gpucal export` has --model: each refits the tool's single-number fields to the step's
// operations, rewrites them, and leaves the residual table (NOTES.md's "Workload-aware fields")
// in report.workload_notes. An operation that cannot be costed is a refusal.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "app/export/export_common.h"
#include "app/export/export_workload.h"

namespace gpucal::calibration {

// NERSC system.json: matrix_flops_fp16 over the step's GEMMs; nvlink_latency and
// nvlink_bandwidth over its collectives within a node; ib_latency and ib_bandwidth over those
// across nodes. gpus_per_node: nvlink_size.
void refit_nersc(const ExportWorkload& w, int64_t gpus_per_node, nlohmann::json& system, ExportReport& report);

// Calculon system.json: per tier (networks[0] within a node, [1] across nodes) one latency, the
// bandwidth (all_reduce keeps scalar 2) and the all_gather, reduce_scatter and p2p scalars over
// the step's messages on that tier.
void refit_calculon(const ExportWorkload& w, nlohmann::json& system, ExportReport& report);

// ASTRA-sim: dimension 0's per-link bandwidth (GB/s) and hop latency (ns) over the step's
// collectives within a node, peak-perf (TFLOP/s) over its GEMMs.
struct AstraSimFields {
  double link_gbps = 0, hop_latency_ns = 0, peak_tflops = 0, local_mem_gbps = 0;
};
void refit_astrasim(const ExportWorkload& w, AstraSimFields& fields, ExportReport& report);

// vTrain system_config.json: intra_node_bandwidth (its fallback for GPU counts without a table)
// over the step's allreduces within a node, inter_node_bandwidth over those across nodes.
void refit_vtrain(const ExportWorkload& w, nlohmann::json& config, ExportReport& report);

}  // namespace gpucal::calibration
