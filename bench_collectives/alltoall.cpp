// alltoall: block p of rank k's input goes to block k of rank p's output. S = total send
// buffer = count_per_peer * n * sizeof(dtype); busbw factor (n-1)/n.
#include "bench_collectives/collective.h"
#include "harness/collective_formulas.h"

namespace gpucal::coll {

const CollectiveDesc& alltoall_desc() {
  static const CollectiveDesc d{
      "alltoall", false, false, granule_ranks,
      exchange_bus_factor,
      [](int64_t e, int) { return Counts{e, e}; },
      at_start, at_start,
      [](const Reference& ref, int rank, int64_t j) {
        const int64_t per = ref.counts.send / ref.nranks;
        return ref.input(static_cast<int>(j / per), rank * per + j % per);
      },
      [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp, int) {
        c.alltoall(s, r, static_cast<size_t>(k.send) / static_cast<size_t>(c.size()), t);
      }};
  return d;
}

}  // namespace gpucal::coll
