// broadcast: every rank ends with the root's input. S = count * sizeof(dtype); busbw
// factor 1 (each byte crosses each link once).
#include "bench_collectives/collective.h"
#include "harness/collective_formulas.h"

namespace gpucal::coll {

const CollectiveDesc& broadcast_desc() {
  static const CollectiveDesc d{
      "broadcast", false, true, granule_one,
      unit_bus_factor,
      [](int64_t e, int) { return Counts{e, e}; },
      at_start, at_start,
      [](const Reference& ref, int, int64_t j) { return ref.input(ref.root, j); },
      [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp, int root) {
        c.broadcast(s, r, static_cast<size_t>(k.send), t, root);
      }};
  return d;
}

}  // namespace gpucal::coll
