// Host AdamW step over a flat parameter tensor, in place on p, m, v (torch's fused AdamW
// semantics, op_math.h).
#include "bench_memory/host_parallel.h"
#include "bench_memory/op_math.h"

namespace gpucal::memory::host {

namespace {

template <typename S>
void adamw_typed(const LaunchArgs& a) {
  using T = typename S::T;
  T* p = tensor<T>(a, 0);
  const T* g = tensor<T>(a, 1);
  T* m = tensor<T>(a, 2);
  T* v = tensor<T>(a, 3);
  const math::AdamWConstants c = math::adamw_constants(a.s);
  parallel_chunks(a.dims.n, kGrain, [=](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      float pi = S::load(p[i]), mi = S::load(m[i]), vi = S::load(v[i]);
      math::adamw(pi, S::load(g[i]), mi, vi, c);
      p[i] = S::store(pi);
      m[i] = S::store(mi);
      v[i] = S::store(vi);
    }
  });
}

}  // namespace

void adamw(const LaunchArgs& a) {
  if (a.kernel != Kernel::adamw_step) throw std::logic_error("host::adamw: not adamw_step");
  with_storage(a.dtype, [&](auto s) { adamw_typed<decltype(s)>(a); });
}

}  // namespace gpucal::memory::host
