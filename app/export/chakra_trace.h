// One rank's Chakra execution trace (app/export/chakra_et.proto) from its stage's program
// (app/export/step_program.h): a GlobalMetadata message, then one Node per program node, each
// message preceded by its length as a varint. Node ids are the program's indices, so every rank
// of a stage has the same ids. The attributes are those ASTRA-sim's workload layer reads
// (astra-sim/workload/Workload.cc and Chakra's feeders), with the types Chakra's own tools write:
//   every node   is_cpu_op (bool false: a GPU operation)
//   COMP         duration_micros (the calibrated time, whole µs: the rounding error is carried
//                to the next compute node, so a rank's sum stays within 0.5 µs of the exact one);
//                num_ops (int64: 2mnk for GEMMs, the fa2 count for attention, one per element
//                for the memory-bound kernels) and tensor_size (uint64, bytes read and written)
//                for ASTRA-sim's roofline mode
//   COMM_COLL    comm_type (int64, CollectiveCommType), comm_size (int64, ASTRA-sim's
//                convention: all-gather the per-rank input S / n, the others nccl-tests' S),
//                pg_name (string, the communicator group's id in comm_group.json),
//                involved_dim (bool list: the network dimensions the group spans), comm_priority
//                (int32: 1 on the pipeline's critical path, 0 for gradient buckets; used with
//                ASTRA-sim's EXPLICIT scheduling policy)
//   SEND / RECV  comm_src, comm_dst, comm_tag (int32), comm_size (int64)
// and ours, for readers and checks: gpucal_role (the derived operation), gpucal_provenance
// (measured | interpolated | extrapolated), gpucal_time_us (double, the exact time per call).
// All dependencies are data_deps (the only ones Chakra's first feeder reads).
#pragma once

#include <cstdint>
#include <string>

#include "app/export/export_workload.h"
#include "app/export/rank_layout.h"

namespace gpucal::calibration {

struct TraceShape {
  int64_t ranks_per_node = 8;  // places groups on nodes (involved_dim)
  int64_t network_dims = 1;    // dimensions of the simulated network: 1 within a node, 2 beyond
};

// The serialized trace of `rank`, which runs `program` (its stage's).
std::string chakra_trace(const StageProgram& program, int64_t rank, RankLayout& ranks, const TraceShape& shape,
                         const std::string& description);

// ASTRA-sim's comm_size for a collective whose nccl-tests size is `size_bytes` over n ranks:
// the all-gather's per-rank input (S / n), the buffer (S) for the others.
int64_t astrasim_comm_size(const std::string& collective, int64_t size_bytes, int64_t group_size);

// The bytes a compute operation reads and writes (ASTRA-sim's tensor_size): GEMM A + B + C
// (+ C again when beta != 0); attention Q, K, V, O forward and those with their gradients
// backward; memory kernels their bytes moved (core/formulas/kernel_table.h).
double compute_bytes(const model::ModelOp& op);

}  // namespace gpucal::calibration
