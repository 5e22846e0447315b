// Host residual add and dropout + residual add (y = r + x * mask / (1 - p), the keep mask
// saved as one byte per element, as torch's dropout returns it).
#include "bench_memory/host_parallel.h"
#include "bench_memory/op_math.h"

namespace gpucal::memory::host {

namespace {

template <typename S>
void residual_typed(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t n = a.dims.rows * a.dims.cols;
  const T* x = tensor<T>(a, 0);
  const T* r = tensor<T>(a, 1);
  T* y = tensor<T>(a, 2);
  if (a.kernel == Kernel::residual_add) {
    parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) y[i] = S::store(S::load(x[i]) + S::load(r[i]));
    });
    return;
  }
  if (a.kernel != Kernel::dropout_residual_add) throw std::logic_error("host::residual: not a residual kernel");
  uint8_t* mask = tensor<uint8_t>(a, 3);
  const uint32_t seed = a.s.dropout_seed, threshold = math::dropout_threshold(a.s.dropout_p);
  const float scale = 1.0f / (1.0f - a.s.dropout_p);
  parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      const bool keep = math::dropout_keep(seed, static_cast<uint64_t>(i), threshold);
      y[i] = S::store(S::load(r[i]) + (keep ? S::load(x[i]) * scale : 0.0f));
      mask[i] = keep ? 1 : 0;
    }
  });
}

}  // namespace

void residual(const LaunchArgs& a) {
  with_storage(a.dtype, [&](auto s) { residual_typed<decltype(s)>(a); });
}

}  // namespace gpucal::memory::host
