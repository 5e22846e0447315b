// allgather: rank k's block lands at block k of every rank's output. S = total output =
// send_count * n * sizeof(dtype), each rank's block rounded down to 16 bytes (nccl-tests);
// busbw factor (n-1)/n. In place: the input is block `rank` of the output buffer.
#include "bench_collectives/collective.h"

namespace gpucal::coll {

const CollectiveDesc& allgather_desc() {
  static const CollectiveDesc d{
      .name = "allgather",
      .counts =
          [](int64_t e, size_t esize, int n) {
            const int64_t block = rank_block(e, esize, n);
            return Counts{block, block * n, block};
          },
      .in_place_send_offset = [](int rank, const Counts& c) { return rank * c.send; },
      .in_place_recv_offset = at_start,
      .expected =
          [](const Reference& ref, int, int64_t j) {
            const int64_t per = ref.counts.send;
            return ref.input(static_cast<int>(j / per), j % per);
          },
      .issue =
          [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp, int) {
            c.allgather(s, r, static_cast<size_t>(k.send), t);
          },
  };
  return d;
}

}  // namespace gpucal::coll
