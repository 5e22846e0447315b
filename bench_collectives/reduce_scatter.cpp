// reduce_scatter: rank r ends with block r of the reduction of all inputs. S = total
// input = recv_count * n * sizeof(dtype), each rank's block rounded down to 16 bytes
// (nccl-tests); busbw factor (n-1)/n. In place: the output is block `rank` of the input
// buffer.
#include "bench_collectives/collective.h"

namespace gpucal::coll {

const CollectiveDesc& reduce_scatter_desc() {
  static const CollectiveDesc d{
      .name = "reduce_scatter",
      .counts =
          [](int64_t e, size_t esize, int n) {
            const int64_t block = rank_block(e, esize, n);
            return Counts{block * n, block, block};
          },
      .in_place_send_offset = at_start,
      .in_place_recv_offset = [](int rank, const Counts& c) { return rank * c.recv; },
      .expected = [](const Reference& ref, int rank, int64_t j) { return ref.reduced(rank * ref.counts.recv + j); },
      .issue =
          [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp op, int) {
            c.reduce_scatter(s, r, static_cast<size_t>(k.recv), t, op);
          },
  };
  return d;
}

}  // namespace gpucal::coll
