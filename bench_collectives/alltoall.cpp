// alltoall: block p of rank k's input goes to block k of rank p's output. S = total send
// buffer = count_per_peer * n * sizeof(dtype), the per-peer block rounded down to 16 bytes
// (nccl-tests); busbw factor (n-1)/n.
#include "bench_collectives/collective.h"

namespace gpucal::coll {

const CollectiveDesc& alltoall_desc() {
  static const CollectiveDesc d{
      .name = "alltoall",
      .counts =
          [](int64_t e, size_t esize, int n) {
            const int64_t block = rank_block(e, esize, n);
            return Counts{block * n, block * n, block};
          },
      .in_place_send_offset = at_start,
      .in_place_recv_offset = at_start,
      .expected =
          [](const Reference& ref, int rank, int64_t j) {
            const int64_t per = ref.counts.param;
            return ref.input(static_cast<int>(j / per), rank * per + j % per);
          },
      .issue =
          [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp, int) {
            c.alltoall(s, r, static_cast<size_t>(k.param), t);
          },
  };
  return d;
}

}  // namespace gpucal::coll
