// Host LayerNorm and RMSNorm, forward and backward, one row at a time per thread (fp32
// arithmetic, two passes over the row: statistics, then outputs). The backward passes sum
// dgamma/dbeta over rows into per-thread column partials (the workspace), reduced at the end.
#include <cmath>
#include <cstring>

#include "bench_memory/host_parallel.h"

namespace gpucal::memory::host {

namespace {

// Both forward passes. layer: LayerNorm (x gamma beta | y mean rstd) or RMSNorm (x gamma | y rstd).
template <typename S, bool layer>
void norm_fwd(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t cols = a.dims.cols;
  const T* x = tensor<T>(a, 0);
  const T* gamma = tensor<T>(a, 1);
  const T* beta = layer ? tensor<T>(a, 2) : nullptr;
  T* y = tensor<T>(a, layer ? 3 : 2);
  float* mean_out = layer ? tensor<float>(a, 4) : nullptr;
  float* rstd_out = tensor<float>(a, layer ? 5 : 3);
  const float eps = a.s.norm_eps;
  parallel_chunks(a.dims.rows, row_grain(cols), [=](int64_t b, int64_t e, int) {
    for (int64_t r = b; r < e; ++r) {
      const T* xr = x + r * cols;
      T* yr = y + r * cols;
      const float mean =
          layer ? lane_sum(0, cols, [=](int64_t j) { return S::load(xr[j]); }) / static_cast<float>(cols) : 0.0f;
      const float sq = lane_sum(0, cols, [=](int64_t j) {
        const float d = S::load(xr[j]) - mean;
        return d * d;
      });
      const float rstd = 1.0f / std::sqrt(sq / static_cast<float>(cols) + eps);
      for (int64_t j = 0; j < cols; ++j)
        yr[j] = S::store((S::load(xr[j]) - mean) * rstd * S::load(gamma[j]) + (layer ? S::load(beta[j]) : 0.0f));
      if (layer) mean_out[r] = mean;
      rstd_out[r] = rstd;
    }
  });
}

// Shared by both backward passes. layer: LayerNorm (mean input, dbeta output) or RMSNorm.
// Tensors: LayerNorm dy x gamma mean rstd | dx dgamma dbeta; RMSNorm dy x gamma rstd | dx dgamma.
template <typename S, bool layer>
void norm_bwd(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t cols = a.dims.cols;
  const T* dy = tensor<T>(a, 0);
  const T* x = tensor<T>(a, 1);
  const T* gamma = tensor<T>(a, 2);
  const float* mean_in = layer ? tensor<float>(a, 3) : nullptr;
  const float* rstd_in = tensor<float>(a, layer ? 4 : 3);
  T* dx = tensor<T>(a, layer ? 5 : 4);
  T* dgamma = tensor<T>(a, layer ? 6 : 5);
  T* dbeta = layer ? tensor<T>(a, 7) : nullptr;
  // Workspace: per thread, cols partial sums of dgamma (and of dbeta).
  const int nt = threads();
  const int64_t per_thread = cols * (layer ? 2 : 1);
  float* partial = static_cast<float*>(a.workspace);
  std::memset(partial, 0, static_cast<size_t>(nt * per_thread) * sizeof(float));
  parallel_chunks(a.dims.rows, row_grain(cols), [=](int64_t b, int64_t e, int t) {
    float* pg = partial + t * per_thread;
    float* pb = pg + cols;
    for (int64_t r = b; r < e; ++r) {
      const T* dyr = dy + r * cols;
      const T* xr = x + r * cols;
      const float mean = layer ? mean_in[r] : 0.0f, rstd = rstd_in[r];
      const float sum_g = layer ? lane_sum(0, cols, [=](int64_t j) { return S::load(dyr[j]) * S::load(gamma[j]); }) : 0.0f;
      const float sum_gx = lane_sum(0, cols, [=](int64_t j) {
        return S::load(dyr[j]) * S::load(gamma[j]) * ((S::load(xr[j]) - mean) * rstd);
      });
      const float mean_g = layer ? sum_g / static_cast<float>(cols) : 0.0f;
      const float mean_gx = sum_gx / static_cast<float>(cols);
      T* dxr = dx + r * cols;
      for (int64_t j = 0; j < cols; ++j) {
        const float d = S::load(dyr[j]);
        const float xhat = (S::load(xr[j]) - mean) * rstd;
        dxr[j] = S::store(rstd * (d * S::load(gamma[j]) - mean_g - xhat * mean_gx));
        pg[j] += d * xhat;
        if (layer) pb[j] += d;
      }
    }
  });
  parallel_chunks(cols, kGrain, [=](int64_t b, int64_t e, int) {
    for (int64_t j = b; j < e; ++j) {
      float g = 0, bsum = 0;
      for (int t = 0; t < nt; ++t) {
        g += partial[t * per_thread + j];
        if (layer) bsum += partial[t * per_thread + cols + j];
      }
      dgamma[j] = S::store(g);
      if (layer) dbeta[j] = S::store(bsum);
    }
  });
}

}  // namespace

size_t norm_workspace_bytes(Kernel k, const Dims& d) {
  if (k == Kernel::layernorm_bwd) return static_cast<size_t>(threads() * 2 * d.cols) * sizeof(float);
  if (k == Kernel::rmsnorm_bwd) return static_cast<size_t>(threads() * d.cols) * sizeof(float);
  return 0;
}

void norm(const LaunchArgs& a) {
  with_storage(a.dtype, [&](auto s) {
    using S = decltype(s);
    switch (a.kernel) {
      case Kernel::layernorm_fwd: return norm_fwd<S, true>(a);
      case Kernel::rmsnorm_fwd: return norm_fwd<S, false>(a);
      case Kernel::layernorm_bwd: return norm_bwd<S, true>(a);
      case Kernel::rmsnorm_bwd: return norm_bwd<S, false>(a);
      default: throw std::logic_error("host::norm: not a normalization kernel");
    }
  });
}

}  // namespace gpucal::memory::host
