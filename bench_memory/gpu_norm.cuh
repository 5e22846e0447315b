// LayerNorm and RMSNorm, forward and backward, on GPUs: one block per row (grid-stride over
// rows), 16-byte loads, fp32 statistics by block reductions; the row is read again from
// L1/L2 for the outputs. Backward: persistent blocks each own a set of rows and sum their
// dgamma/dbeta contributions per column, in registers when the row fits (<= 32 columns per
// thread, cols <= 8192) or in their own fp32 row of the workspace otherwise; a second kernel
// adds the blocks' partial rows.
#pragma once

#include "bench_memory/gpu_common.cuh"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

// Sum of term(x) over the row's elements, combined over the block.
template <typename S, typename F>
__device__ __forceinline__ float row_sum(const typename S::T* xr, int64_t cols, float* scratch, F term) {
  constexpr int V = kVec<S>;
  float acc = 0;
  for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
    float v[V];
    load_vec<S>(xr, j, cols, v);
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (j + k < cols) acc += term(v[k]);
  }
  return block_sum(acc, scratch);
}

// Both forward passes. layer: LayerNorm (y = (x - mean) rstd gamma + beta, writes mean and
// rstd); else RMSNorm (y = x rstd gamma, writes rstd; beta and mean_out are null).
template <typename S, bool layer>
__global__ void __launch_bounds__(kThreads)
    norm_fwd_kernel(const typename S::T* x, const typename S::T* gamma, const typename S::T* beta, typename S::T* y,
                    float* mean_out, float* rstd_out, int64_t rows, int64_t cols, float eps) {
  __shared__ float scratch[2 * kMaxWarps];
  constexpr int V = kVec<S>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const typename S::T* xr = x + r * cols;
    const float mean =
        layer ? row_sum<S>(xr, cols, scratch, [](float v) { return v; }) / static_cast<float>(cols) : 0.0f;
    const float sq = row_sum<S>(xr, cols, scratch, [mean](float v) { return (v - mean) * (v - mean); });
    const float rstd = rsqrtf(sq / static_cast<float>(cols) + eps);
    for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
      float v[V], g[V], b[V] = {};
      load_vec<S>(xr, j, cols, v);
      load_vec<S>(gamma, j, cols, g);
      if (layer) load_vec<S>(beta, j, cols, b);
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = (v[k] - mean) * rstd * g[k] + b[k];
      store_vec<S>(y + r * cols, j, cols, v);
    }
    if (threadIdx.x == 0) {
      if (layer) mean_out[r] = mean;
      rstd_out[r] = rstd;
    }
  }
}

// Register-held column groups per thread in the backward pass: G groups of V columns, 32
// columns per thread for every dtype. G = 0: the workspace path for wider rows.
template <typename S>
constexpr int bwd_groups() {
  return 32 / kVec<S>;
}

struct NormBwdArgs {
  const void* dy;
  const void* x;
  const void* gamma;
  const float* mean;  // null for RMSNorm
  const float* rstd;
  void* dx;
  float* partial;  // [gridDim.x][cols * (layer ? 2 : 1)]
  int64_t rows, cols;
};

template <typename S, bool layer, int G>
__global__ void __launch_bounds__(kThreads) norm_bwd_kernel(NormBwdArgs a) {
  using T = typename S::T;
  __shared__ float scratch[2 * kMaxWarps];
  constexpr int V = kVec<S>;
  const T* dy = static_cast<const T*>(a.dy);
  const T* x = static_cast<const T*>(a.x);
  const T* gamma = static_cast<const T*>(a.gamma);
  T* dx = static_cast<T*>(a.dx);
  const int64_t cols = a.cols, width = cols * (layer ? 2 : 1);
  float* pg = a.partial + blockIdx.x * width;
  float* pb = pg + cols;
  float acc_g[G > 0 ? G : 1][V] = {}, acc_b[G > 0 ? G : 1][V] = {};
  if (G == 0) {
    // Zeroed by other threads than the ones that own the columns below: wait for all.
    for (int64_t j = threadIdx.x; j < width; j += kThreads) pg[j] = 0;
    __syncthreads();
  }
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    const T* dyr = dy + r * cols;
    const T* xr = x + r * cols;
    const float mean = layer ? a.mean[r] : 0.0f, rstd = a.rstd[r];
    float sum_g = 0, sum_gx = 0;
    for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
      float d[V], xv[V], g[V];
      load_vec<S>(dyr, j, cols, d);
      load_vec<S>(xr, j, cols, xv);
      load_vec<S>(gamma, j, cols, g);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float gd = d[k] * g[k];
        sum_g += gd;
        sum_gx += gd * (xv[k] - mean) * rstd;
      }
    }
    const float mean_g = layer ? block_sum(sum_g, scratch) / static_cast<float>(cols) : 0.0f;
    const float mean_gx = block_sum(sum_gx, scratch) / static_cast<float>(cols);
    auto column_group = [&](int64_t j, float* ag, float* ab) {
      float d[V], xv[V], g[V];
      load_vec<S>(dyr, j, cols, d);
      load_vec<S>(xr, j, cols, xv);
      load_vec<S>(gamma, j, cols, g);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float xhat = (xv[k] - mean) * rstd;
        ag[k] += d[k] * xhat;
        ab[k] += d[k];
        xv[k] = rstd * (d[k] * g[k] - mean_g - xhat * mean_gx);
      }
      store_vec<S>(dx + r * cols, j, cols, xv);
    };
    if (G > 0) {
#pragma unroll
      for (int grp = 0; grp < (G > 0 ? G : 1); ++grp) {
        const int64_t j = (static_cast<int64_t>(grp) * kThreads + threadIdx.x) * V;
        if (j < cols) column_group(j, acc_g[grp], acc_b[grp]);
      }
    } else {
      for (int64_t j = static_cast<int64_t>(threadIdx.x) * V; j < cols; j += kThreads * V) {
        float ag[V] = {}, ab[V] = {};
        column_group(j, ag, ab);
        for (int k = 0; k < V && j + k < cols; ++k) {
          pg[j + k] += ag[k];
          if (layer) pb[j + k] += ab[k];
        }
      }
    }
  }
  if (G > 0) {
#pragma unroll
    for (int grp = 0; grp < (G > 0 ? G : 1); ++grp) {
      const int64_t j = (static_cast<int64_t>(grp) * kThreads + threadIdx.x) * V;
      for (int k = 0; k < V && j + k < cols; ++k) {
        pg[j + k] = acc_g[grp][k];
        if (layer) pb[j + k] = acc_b[grp][k];
      }
    }
  }
}

// dgamma[j] (and dbeta[j]) = the blocks' partial rows added up.
template <typename S, bool layer>
__global__ void __launch_bounds__(kThreads)
    norm_bwd_reduce(const float* partial, int blocks, int64_t cols, typename S::T* dgamma, typename S::T* dbeta) {
  const int64_t width = cols * (layer ? 2 : 1);
  for (int64_t j = global_thread(); j < cols; j += grid_threads()) {
    float g = 0, b = 0;
    for (int blk = 0; blk < blocks; ++blk) {
      g += partial[blk * width + j];
      if (layer) b += partial[blk * width + cols + j];
    }
    dgamma[j] = S::store(g);
    if (layer) dbeta[j] = S::store(b);
  }
}

inline int norm_bwd_blocks(int64_t rows, int sms) {
  const int64_t cap = sms > 0 ? 2 * static_cast<int64_t>(sms) : 256;
  return static_cast<int>(rows < cap ? rows : cap);
}

inline size_t norm_workspace_bytes(const LaunchArgs& a, int sms) {
  const bool layer = a.kernel == Kernel::layernorm_bwd;
  if (!layer && a.kernel != Kernel::rmsnorm_bwd) return 0;
  return static_cast<size_t>(norm_bwd_blocks(a.dims.rows, sms)) * static_cast<size_t>(a.dims.cols) * (layer ? 2 : 1) *
         sizeof(float);
}

template <typename S, bool layer>
void launch_norm_bwd(const LaunchArgs& a, int sms) {
  using T = typename S::T;
  const gpuStream_t st = stream_of(a);
  const int blocks = norm_bwd_blocks(a.dims.rows, sms);
  NormBwdArgs n{arg<const void>(a, 0), arg<const void>(a, 1), arg<const void>(a, 2),
                layer ? arg<const float>(a, 3) : nullptr, arg<const float>(a, layer ? 4 : 3), arg<void>(a, layer ? 5 : 4),
                static_cast<float*>(a.workspace), a.dims.rows, a.dims.cols};
  constexpr int G = bwd_groups<S>();
  if (a.dims.cols <= static_cast<int64_t>(G) * kThreads * kVec<S>)
    norm_bwd_kernel<S, layer, G><<<blocks, kThreads, 0, st>>>(n);
  else
    norm_bwd_kernel<S, layer, 0><<<blocks, kThreads, 0, st>>>(n);
  GPU_CHECK_LAUNCH();
  norm_bwd_reduce<S, layer><<<grid_for(a.dims.cols, sms, 4), kThreads, 0, st>>>(
      static_cast<const float*>(a.workspace), blocks, a.dims.cols, arg<T>(a, layer ? 6 : 5), layer ? arg<T>(a, 7) : nullptr);
  GPU_CHECK_LAUNCH();
}

inline void launch_norm(const LaunchArgs& a, int sms) {
  const gpuStream_t st = stream_of(a);
  const int64_t rows = a.dims.rows, cols = a.dims.cols;
  const unsigned grid = static_cast<unsigned>(rows < (sms > 0 ? sms * 16 : 2048) ? rows : (sms > 0 ? sms * 16 : 2048));
  with_storage(a.dtype, [&](auto s) {
    using S = decltype(s);
    using T = typename S::T;
    switch (a.kernel) {
      case Kernel::layernorm_fwd:
        norm_fwd_kernel<S, true><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), arg<const T>(a, 1), arg<const T>(a, 2),
                                                             arg<T>(a, 3), arg<float>(a, 4), arg<float>(a, 5), rows, cols,
                                                             a.s.norm_eps);
        GPU_CHECK_LAUNCH();
        return;
      case Kernel::rmsnorm_fwd:
        norm_fwd_kernel<S, false><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), arg<const T>(a, 1), nullptr, arg<T>(a, 2),
                                                              nullptr, arg<float>(a, 3), rows, cols, a.s.norm_eps);
        GPU_CHECK_LAUNCH();
        return;
      case Kernel::layernorm_bwd: return launch_norm_bwd<S, true>(a, sms);
      case Kernel::rmsnorm_bwd: return launch_norm_bwd<S, false>(a, sms);
      default: throw std::logic_error("launch_norm: not a normalization kernel");
    }
  });
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
