// allgather: rank k's block lands at block k of every rank's output. S = total output =
// send_count * n * sizeof(dtype); busbw factor (n-1)/n. In place: the input is block
// `rank` of the output buffer.
#include "bench_collectives/collective.h"
#include "harness/collective_formulas.h"

namespace gpucal::coll {

const CollectiveDesc& allgather_desc() {
  static const CollectiveDesc d{
      "allgather", false, false, granule_ranks,
      exchange_bus_factor,
      [](int64_t e, int n) { return Counts{e / n, e}; },
      [](int rank, const Counts& c) { return rank * c.send; }, at_start,
      [](const Reference& ref, int, int64_t j) {
        const int64_t per = ref.counts.send;
        return ref.input(static_cast<int>(j / per), j % per);
      },
      [](Communicator& c, const void* s, void* r, const Counts& k, DType t, ReduceOp, int) {
        c.allgather(s, r, static_cast<size_t>(k.send), t);
      }};
  return d;
}

}  // namespace gpucal::coll
