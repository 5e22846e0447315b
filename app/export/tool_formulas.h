// Each hardware consumer's own time formula for one operation, evaluated on the fields we write
// for it: what the tool predicts for a GEMM or a message of the step. The workload-aware exports
// (app/export/workload_fit.h) fit the tool's single-number fields with them, and NOTES.md's
// residual table divides them by our time. Each formula is the one the conformance tests
// reimplement from the tool's code (tests/calibration/tool_formulas_reference.h, cited there).
// Times in seconds; sizes as nccl-tests' S (bytes, the whole buffer).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/model/workload.h"

namespace gpucal::calibration::tool_formulas {

// NERSC transformer-perf-estimates: get_time_flops' 20 µs + flops / (0.8·matrix_flops_fp16), with
// the tool's m·n·(2k-1) flops per GEMM (times batch), in flops_units.
double nersc_gemm_s(const nlohmann::json& system, const model::GemmShape& gemm);
// get_time_comm of `type` (allreduce | allgather | reducescatter) over n_gpus, `topology` GPUs per
// node (n_gpus <= topology: one node).
double nersc_comm_s(const nlohmann::json& system, double size_bytes, int64_t n_gpus, const std::string& type,
                    int64_t topology);
// The tool's name of our collective (allreduce, allgather, reducescatter); "" for one it lacks.
std::string nersc_comm_type(const std::string& collective);

// Calculon Network.time: latency + scalar·S·(1 + offset/n) / (bandwidth·1e9·efficiency); `op` is
// its name (all_reduce, all_gather, reduce_scatter, p2p).
double calculon_comm_s(const nlohmann::json& network, const std::string& op, double size_bytes, int64_t n);
// Calculon's name of our collective or p2p pattern; "" for one it lacks.
std::string calculon_op_name(const model::ModelOp& op);

// ASTRA-sim's analytical ring over one Switch dimension of n NPUs (one chunk): each of its steps
// sends S/n bytes over two hops (2·latency + bytes / bandwidth), allreduce 2(n-1) steps,
// allgather and reduce-scatter n-1, all-to-all n(n-1)/2 (its ring with the default, normal,
// injection policy: astra-sim/system/astraccl/native_collectives/collective_algorithm/Ring.cc);
// every reduced chunk costs 3 passes at local-mem-bw ((n-1)/n·S bytes for allreduce and
// reduce-scatter). bandwidth in GiB/s, latency in ns per hop.
double astrasim_collective_s(double bandwidth_gibps, double latency_ns, double local_mem_gbps,
                             const std::string& collective, double size_bytes, int64_t n);
// Its roofline compute node: flops / (peak-perf·1e12).
double astrasim_gemm_s(double peak_tflops, double flops);

// vTrain compute_comm_time's fallbacks: an intra-node allreduce of S over n GPUs takes
// S / (intra_node_bandwidth·2^30)·2(n-1)/n; a data-parallel one across nodes
// S / (inter_node_bandwidth·2^30/8)·2(n-1)/n.
double vtrain_allreduce_s(double bandwidth, bool inter_node, double size_bytes, int64_t n);

}  // namespace gpucal::calibration::tool_formulas
