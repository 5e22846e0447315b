// A collective as nccl-tests sees it: how a requested size S (bytes) maps to per-rank
// element counts and the size that runs (nccl-tests' getCollByteCount, rounding included),
// the bus-bandwidth factor (busbw = algbw * factor, algbw = run size / t), where in-place
// buffers sit, and the reference value of every output element. One small file per
// collective fills a descriptor; the op, the sweep and the checks use only this.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/world/comm.h"

namespace gpucal::coll {

struct Counts {
  int64_t send = 0, recv = 0;  // elements per rank in the send and receive buffers
  // The count the API takes and nccl-tests prints as `count`: per rank for allgather (its
  // send count), reduce_scatter (its receive count) and alltoall (per peer); the whole
  // count for allreduce, broadcast and reduce.
  int64_t param = 0;
};

// nccl-tests' per-rank block where S is split by rank: elements / n, rounded down to a
// multiple of 16 bytes (16 / esize elements; one element for wider types).
int64_t rank_block(int64_t elements, size_t esize, int nranks);
// The size that runs, as nccl-tests prints `size`: max(send, recv) * esize, i.e. S
// rounded down to what the collective can run.
int64_t run_bytes(const Counts& c, size_t esize);

// Inputs are small integers chosen per (rank, index) so that every reduction is exact in
// any order in every dtype (see input_value); the reference is computed from them.
struct Reference {
  int nranks = 1, root = 0;
  ReduceOp op = ReduceOp::sum;
  DType dtype = DType::fp32;
  Counts counts;
  double input(int rank, int64_t index) const;  // element `index` of rank's send buffer
  double reduced(int64_t index) const;          // op over all ranks of input(r, index)
};

struct CollectiveDesc {
  std::string name;  // allreduce, allgather, reduce_scatter, broadcast, reduce, alltoall
  bool reduces = false, rooted = false;
  double (*bus_factor)(int nranks) = nullptr;
  // Per-rank counts for elements = floor(S / sizeof(dtype)), rounded as nccl-tests does.
  Counts (*counts)(int64_t elements, size_t esize, int nranks) = nullptr;
  // In-place layout, in elements from the start of the single buffer: where this rank's
  // input starts and where its output starts (NCCL's conventions).
  int64_t (*in_place_send_offset)(int rank, const Counts& c) = nullptr;
  int64_t (*in_place_recv_offset)(int rank, const Counts& c) = nullptr;
  // Expected value of output element j on `rank`; NaN where nothing is defined (the
  // receive buffer of a non-root rank in reduce).
  double (*expected)(const Reference& ref, int rank, int64_t j) = nullptr;
  // Issues the collective on the communicator (NCCL argument conventions).
  void (*issue)(Communicator& comm, const void* send, void* recv, const Counts& c, DType t, ReduceOp op,
                int root) = nullptr;
};

const CollectiveDesc& allreduce_desc();
const CollectiveDesc& allgather_desc();
const CollectiveDesc& reduce_scatter_desc();
const CollectiveDesc& broadcast_desc();
const CollectiveDesc& reduce_desc();
const CollectiveDesc& alltoall_desc();

// All six in the order they run; lookup by name ("reduce-scatter" and "all" accepted).
const std::vector<const CollectiveDesc*>& all_collectives();
std::vector<const CollectiveDesc*> parse_collectives(const std::string& csv);  // throws UsageError

// Buffers are laid out like this everywhere, so descriptors share the trivial pieces.
inline int64_t at_start(int, const Counts&) { return 0; }
// allreduce, broadcast, reduce: the whole count everywhere.
inline Counts whole_counts(int64_t elements, size_t, int) { return Counts{elements, elements, elements}; }

}  // namespace gpucal::coll
