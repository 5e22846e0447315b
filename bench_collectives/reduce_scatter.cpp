// reduce_scatter: rank r ends with block r of the reduction of all inputs. S = total
// input = recv_count * n * sizeof(dtype); busbw factor (n-1)/n. In place: the output is
// block `rank` of the input buffer.
#include "bench_collectives/collective.h"
#include "harness/collective_formulas.h"

namespace gpucal::coll {

const CollectiveDesc& reduce_scatter_desc() {
  static const CollectiveDesc d{
      "reduce_scatter", true, false, granule_ranks,
      exchange_bus_factor,
      [](int64_t e, int n) { return Counts{e, e / n}; },
      at_start, [](int rank, const Counts& c) { return rank * c.recv; },
      [](const Reference& ref, int rank, int64_t j) { return ref.reduced(rank * ref.counts.recv + j); },
      [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp op, int) {
        c.reduce_scatter(s, r, static_cast<size_t>(k.recv), t, op);
      }};
  return d;
}

}  // namespace gpucal::coll
