// Host cross-entropy over a vocabulary (cols), per row: forward writes the loss and the
// logsumexp the backward reuses; backward writes (softmax - onehot(target)) / rows, the
// gradient of the mean loss. fp32 arithmetic.
#include <cmath>

#include "bench_memory/host_parallel.h"

namespace gpucal::memory::host {

namespace {

template <typename S>
void cross_entropy_typed(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t cols = a.dims.cols;
  const T* logits = tensor<T>(a, 0);
  const int32_t* target = tensor<int32_t>(a, 1);
  if (a.kernel == Kernel::cross_entropy_fwd) {
    float* loss = tensor<float>(a, 2);
    float* lse_out = tensor<float>(a, 3);
    parallel_chunks(a.dims.rows, row_grain(cols), [=](int64_t b, int64_t e, int) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = logits + r * cols;
        float mx, sum;
        row_max_sum<S>(xr, cols, mx, sum);
        const float lse = mx + std::log(sum);
        lse_out[r] = lse;
        loss[r] = lse - S::load(xr[target[r]]);
      }
    });
    return;
  }
  if (a.kernel != Kernel::cross_entropy_bwd) throw std::logic_error("host::cross_entropy: not a cross-entropy kernel");
  const float* lse = tensor<float>(a, 2);
  T* grad = tensor<T>(a, 3);
  const float inv_rows = 1.0f / static_cast<float>(a.dims.rows);
  parallel_chunks(a.dims.rows, row_grain(cols), [=](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      const T* xr = logits + r * cols;
      T* gr = grad + r * cols;
      const float l = lse[r];
      for (int64_t j = 0; j < cols; ++j) gr[j] = S::store(std::exp(S::load(xr[j]) - l) * inv_rows);
      const int64_t t = target[r];
      gr[t] = S::store((std::exp(S::load(xr[t]) - l) - 1.0f) * inv_rows);
    }
  });
}

}  // namespace

void cross_entropy(const LaunchArgs& a) {
  with_storage(a.dtype, [&](auto s) { cross_entropy_typed<decltype(s)>(a); });
}

}  // namespace gpucal::memory::host
