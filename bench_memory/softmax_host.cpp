// Host row softmax, forward (max, sum of exponentials, then outputs) and backward
// (dx = y * (dy - sum(dy * y))), one row at a time per thread, fp32 arithmetic.
#include <cmath>

#include "bench_memory/host_parallel.h"

namespace gpucal::memory::host {

namespace {

template <typename S>
void softmax_fwd(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t cols = a.dims.cols;
  const T* x = tensor<T>(a, 0);
  T* y = tensor<T>(a, 1);
  parallel_chunks(a.dims.rows, row_grain(cols), [=](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      const T* xr = x + r * cols;
      T* yr = y + r * cols;
      float mx, sum;
      row_max_sum<S>(xr, cols, mx, sum);
      const float inv = 1.0f / sum;
      for (int64_t j = 0; j < cols; ++j) yr[j] = S::store(std::exp(S::load(xr[j]) - mx) * inv);
    }
  });
}

template <typename S>
void softmax_bwd(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t cols = a.dims.cols;
  const T* y = tensor<T>(a, 0);
  const T* dy = tensor<T>(a, 1);
  T* dx = tensor<T>(a, 2);
  parallel_chunks(a.dims.rows, row_grain(cols), [=](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      const T* yr = y + r * cols;
      const T* dyr = dy + r * cols;
      T* dxr = dx + r * cols;
      const float dot = lane_sum(0, cols, [=](int64_t j) { return S::load(yr[j]) * S::load(dyr[j]); });
      for (int64_t j = 0; j < cols; ++j) dxr[j] = S::store(S::load(yr[j]) * (S::load(dyr[j]) - dot));
    }
  });
}

}  // namespace

void softmax(const LaunchArgs& a) {
  with_storage(a.dtype, [&](auto s) {
    using S = decltype(s);
    if (a.kernel == Kernel::softmax_fwd) return softmax_fwd<S>(a);
    if (a.kernel == Kernel::softmax_bwd) return softmax_bwd<S>(a);
    throw std::logic_error("host::softmax: not a softmax kernel");
  });
}

}  // namespace gpucal::memory::host
