// reduce: the root ends with the reduction of all inputs; other ranks' outputs are
// undefined (not checked). S = count * sizeof(dtype); busbw factor 1.
#include <cmath>

#include "bench_collectives/collective.h"
#include "harness/collective_formulas.h"

namespace gpucal::coll {

const CollectiveDesc& reduce_desc() {
  static const CollectiveDesc d{
      "reduce", true, true, granule_one,
      unit_bus_factor,
      [](int64_t e, int) { return Counts{e, e}; },
      at_start, at_start,
      [](const Reference& ref, int rank, int64_t j) { return rank == ref.root ? ref.reduced(j) : std::nan(""); },
      [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp op, int root) {
        c.reduce(s, r, static_cast<size_t>(k.send), t, op, root);
      }};
  return d;
}

}  // namespace gpucal::coll
