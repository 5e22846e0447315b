// Cross-entropy over a vocabulary on GPUs, one block per row: forward reads the row once
// (running max and sum of exponentials) and writes the loss and the logsumexp; backward
// writes (exp(logits - lse) - onehot(target)) / rows in one pass.
#pragma once

#include "bench_memory/gpu_common.cuh"
#include "bench_memory/gpu_softmax.cuh"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

template <typename S>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_fwd_kernel(const typename S::T* logits, const int32_t* target, float* loss, float* lse_out, int64_t rows,
                             int64_t cols) {
  __shared__ float scratch[2 * kMaxWarps];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const typename S::T* xr = logits + r * cols;
    float m, s;
    row_max_sum<S>(xr, cols, scratch, m, s);
    if (threadIdx.x == 0) {
      const float lse = m + logf(s);
      lse_out[r] = lse;
      loss[r] = lse - S::load(xr[target[r]]);
    }
  }
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    cross_entropy_bwd_kernel(const typename S::T* logits, const int32_t* target, const float* lse, typename S::T* grad,
                             int64_t rows, int64_t cols) {
  constexpr int V = kVec<S>;
  const float inv_rows = 1.0f / static_cast<float>(rows);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const typename S::T* xr = logits + r * cols;
    const float l = lse[r];
    const int64_t t = target[r];
    for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
      float v[V];
      load_vec<S>(xr, j, cols, v);
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = (expf(v[k] - l) - (j + k == t ? 1.0f : 0.0f)) * inv_rows;
      store_vec<S>(grad + r * cols, j, cols, v);
    }
  }
}

inline void launch_cross_entropy(const LaunchArgs& a, int sms) {
  const gpuStream_t st = stream_of(a);
  const unsigned grid = row_grid(a.dims.rows, sms);
  with_storage(a.dtype, [&](auto s) {
    using S = decltype(s);
    using T = typename S::T;
    if (a.kernel == Kernel::cross_entropy_fwd)
      cross_entropy_fwd_kernel<S><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), arg<const int32_t>(a, 1), arg<float>(a, 2),
                                                              arg<float>(a, 3), a.dims.rows, a.dims.cols);
    else if (a.kernel == Kernel::cross_entropy_bwd)
      cross_entropy_bwd_kernel<S><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), arg<const int32_t>(a, 1),
                                                              arg<const float>(a, 2), arg<T>(a, 3), a.dims.rows, a.dims.cols);
    else
      throw std::logic_error("launch_cross_entropy: not a cross-entropy kernel");
    GPU_CHECK_LAUNCH();
  });
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
