// allreduce: every rank ends with the reduction of all inputs. S = count * sizeof(dtype);
// busbw factor 2(n-1)/n (a ring sends and receives each byte 2(n-1)/n times).
#include "bench_collectives/collective.h"

namespace gpucal::coll {

const CollectiveDesc& allreduce_desc() {
  static const CollectiveDesc d{
      .name = "allreduce",
      .counts = whole_counts,
      .in_place_send_offset = at_start,
      .in_place_recv_offset = at_start,
      .expected = [](const Reference& ref, int, int64_t j) { return ref.reduced(j); },
      .issue =
          [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp op, int) {
            c.allreduce(s, r, static_cast<size_t>(k.send), t, op);
          },
  };
  return d;
}

}  // namespace gpucal::coll
