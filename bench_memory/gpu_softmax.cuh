// Row softmax on GPUs, one block per row: forward in two passes over the row (running max
// and sum of exponentials together, then the outputs); backward dx = y * (dy - sum(dy * y)).
#pragma once

#include "bench_memory/gpu_common.cuh"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

// The row's max m and sum s of exp(x - m) in one pass, combined over the block.
template <typename S>
__device__ __forceinline__ void row_max_sum(const typename S::T* xr, int64_t cols, float* scratch, float& m, float& s) {
  constexpr int V = kVec<S>;
  m = -INFINITY, s = 0;
  for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
    float v[V];
    load_vec<S>(xr, j, cols, v);
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (j + k < cols) combine_max_sum(m, s, v[k], 1.0f);
  }
  block_max_sum(m, s, scratch);
}

template <typename S>
__global__ void __launch_bounds__(kThreads) softmax_fwd_kernel(const typename S::T* x, typename S::T* y, int64_t rows, int64_t cols) {
  __shared__ float scratch[2 * kMaxWarps];
  constexpr int V = kVec<S>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const typename S::T* xr = x + r * cols;
    float m, s;
    row_max_sum<S>(xr, cols, scratch, m, s);
    const float inv = 1.0f / s;
    for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
      float v[V];
      load_vec<S>(xr, j, cols, v);
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = expf(v[k] - m) * inv;
      store_vec<S>(y + r * cols, j, cols, v);
    }
  }
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    softmax_bwd_kernel(const typename S::T* y, const typename S::T* dy, typename S::T* dx, int64_t rows, int64_t cols) {
  __shared__ float scratch[2 * kMaxWarps];
  constexpr int V = kVec<S>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const typename S::T* yr = y + r * cols;
    const typename S::T* dyr = dy + r * cols;
    float dot = 0;
    for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
      float a[V], b[V];
      load_vec<S>(yr, j, cols, a);
      load_vec<S>(dyr, j, cols, b);
#pragma unroll
      for (int k = 0; k < V; ++k) dot += a[k] * b[k];
    }
    dot = block_sum(dot, scratch);
    for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
      float a[V], b[V];
      load_vec<S>(yr, j, cols, a);
      load_vec<S>(dyr, j, cols, b);
#pragma unroll
      for (int k = 0; k < V; ++k) a[k] = a[k] * (b[k] - dot);
      store_vec<S>(dx + r * cols, j, cols, a);
    }
  }
}

inline unsigned row_grid(int64_t rows, int sms) {
  const int64_t cap = sms > 0 ? static_cast<int64_t>(sms) * 16 : 2048;
  return static_cast<unsigned>(rows < cap ? rows : cap);
}

inline void launch_softmax(const LaunchArgs& a, int sms) {
  const gpuStream_t st = stream_of(a);
  const unsigned grid = row_grid(a.dims.rows, sms);
  with_storage(a.dtype, [&](auto s) {
    using S = decltype(s);
    using T = typename S::T;
    if (a.kernel == Kernel::softmax_fwd)
      softmax_fwd_kernel<S><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), arg<T>(a, 1), a.dims.rows, a.dims.cols);
    else if (a.kernel == Kernel::softmax_bwd)
      softmax_bwd_kernel<S><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), arg<const T>(a, 1), arg<T>(a, 2), a.dims.rows,
                                                        a.dims.cols);
    else
      throw std::logic_error("launch_softmax: not a softmax kernel");
    GPU_CHECK_LAUNCH();
  });
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
