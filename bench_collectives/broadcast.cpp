// broadcast: every rank ends with the root's input. S = count * sizeof(dtype); busbw
// factor 1 (each byte crosses each link once).
#include "bench_collectives/collective.h"

namespace gpucal::coll {

const CollectiveDesc& broadcast_desc() {
  static const CollectiveDesc d{
      .name = "broadcast",
      .counts = whole_counts,
      .in_place_send_offset = at_start,
      .in_place_recv_offset = at_start,
      .expected = [](const Reference& ref, int, int64_t j) { return ref.input(ref.root, j); },
      .issue =
          [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp, int root) {
            c.broadcast(s, r, static_cast<size_t>(k.send), t, root);
          },
  };
  return d;
}

}  // namespace gpucal::coll
