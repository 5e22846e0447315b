// reduce: the root ends with the reduction of all inputs; other ranks' outputs are
// undefined (not checked). S = count * sizeof(dtype); busbw factor 1.
#include <cmath>

#include "bench_collectives/collective.h"

namespace gpucal::coll {

const CollectiveDesc& reduce_desc() {
  static const CollectiveDesc d{
      .name = "reduce",
      .counts = whole_counts,
      .in_place_send_offset = at_start,
      .in_place_recv_offset = at_start,
      .expected = [](const Reference& ref, int rank, int64_t j) { return rank == ref.root ? ref.reduced(j) : std::nan(""); },
      .issue =
          [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp op, int root) {
            c.reduce(s, r, static_cast<size_t>(k.send), t, op, root);
          },
  };
  return d;
}

}  // namespace gpucal::coll
