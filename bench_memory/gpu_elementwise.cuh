// The elementwise ops on GPUs (GELU, SwiGLU, residual add, dropout + residual add, AdamW):
// grid-stride loops over 16-byte vectors, fp32 math from op_math.h (shared with the host).
#pragma once

#include "bench_memory/gpu_common.cuh"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

// op: 0 gelu_fwd (a -> o1), 1 gelu_bwd (a = x, b = dy -> o1), 2 swiglu_fwd (a, b -> o1),
// 3 swiglu_bwd (a, b, c = dy -> o1 = da, o2 = db), 4 residual_add (a + b -> o1).
template <typename S, int op>
__global__ void __launch_bounds__(kThreads)
    elementwise_kernel(const typename S::T* in_a, const typename S::T* in_b, const typename S::T* in_c,
                       typename S::T* out1, typename S::T* out2, int64_t n) {
  constexpr int V = kVec<S>;
  for (int64_t i = global_thread() * V; i < n; i += grid_threads() * V) {
    float a[V], b[V], c[V], o1[V], o2[V];
    load_vec<S>(in_a, i, n, a);
    if (op != 0) load_vec<S>(in_b, i, n, b);
    if (op == 3) load_vec<S>(in_c, i, n, c);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (op == 0) o1[k] = math::gelu(a[k]);
      if (op == 1) o1[k] = b[k] * math::gelu_grad(a[k]);
      if (op == 2) o1[k] = a[k] * math::sigmoid(a[k]) * b[k];
      if (op == 3) {
        const float sg = math::sigmoid(a[k]);
        o1[k] = c[k] * b[k] * sg * (1.0f + a[k] * (1.0f - sg));
        o2[k] = c[k] * a[k] * sg;
      }
      if (op == 4) o1[k] = a[k] + b[k];
    }
    store_vec<S>(out1, i, n, o1);
    if (op == 3) store_vec<S>(out2, i, n, o2);
  }
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    dropout_residual_kernel(const typename S::T* x, const typename S::T* r, typename S::T* y, uint8_t* mask, int64_t n,
                            uint32_t seed, uint32_t threshold, float scale) {
  constexpr int V = kVec<S>;
  for (int64_t i = global_thread() * V; i < n; i += grid_threads() * V) {
    float a[V], b[V];
    load_vec<S>(x, i, n, a);
    load_vec<S>(r, i, n, b);
    uint8_t keep[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      keep[k] = math::dropout_keep(seed, static_cast<uint64_t>(i + k), threshold) ? 1 : 0;
      b[k] += keep[k] ? a[k] * scale : 0.0f;
    }
    store_vec<S>(y, i, n, b);
    if (i + V <= n) {
      __builtin_memcpy(mask + i, keep, V);  // V (4 or 8) bytes at a V-aligned offset
    } else {
      for (int k = 0; i + k < n; ++k) mask[i + k] = keep[k];
    }
  }
}

template <typename S>
__global__ void __launch_bounds__(kThreads)
    adamw_kernel(typename S::T* p, const typename S::T* g, typename S::T* m, typename S::T* v, int64_t n,
                 math::AdamWConstants c) {
  constexpr int V = kVec<S>;
  for (int64_t i = global_thread() * V; i < n; i += grid_threads() * V) {
    float pv[V], gv[V], mv[V], vv[V];
    load_vec<S>(p, i, n, pv);
    load_vec<S>(g, i, n, gv);
    load_vec<S>(m, i, n, mv);
    load_vec<S>(v, i, n, vv);
#pragma unroll
    for (int k = 0; k < V; ++k) math::adamw(pv[k], gv[k], mv[k], vv[k], c);
    store_vec<S>(p, i, n, pv);
    store_vec<S>(m, i, n, mv);
    store_vec<S>(v, i, n, vv);
  }
}

inline void launch_elementwise(const LaunchArgs& a, int sms) {
  const gpuStream_t st = stream_of(a);
  const int64_t n = a.kernel == Kernel::adamw_step ? a.dims.n : a.dims.rows * a.dims.cols;
  with_storage(a.dtype, [&](auto s) {
    using S = decltype(s);
    using T = typename S::T;
    const unsigned grid = grid_for(n / kVec<S> + 1, sms);
    auto in = [&](int i) { return arg<const T>(a, i); };
    auto out = [&](int i) { return arg<T>(a, i); };
    switch (a.kernel) {
      case Kernel::gelu_fwd: elementwise_kernel<S, 0><<<grid, kThreads, 0, st>>>(in(0), nullptr, nullptr, out(1), nullptr, n); break;
      case Kernel::gelu_bwd: elementwise_kernel<S, 1><<<grid, kThreads, 0, st>>>(in(0), in(1), nullptr, out(2), nullptr, n); break;
      case Kernel::swiglu_fwd: elementwise_kernel<S, 2><<<grid, kThreads, 0, st>>>(in(0), in(1), nullptr, out(2), nullptr, n); break;
      case Kernel::swiglu_bwd: elementwise_kernel<S, 3><<<grid, kThreads, 0, st>>>(in(0), in(1), in(2), out(3), out(4), n); break;
      case Kernel::residual_add: elementwise_kernel<S, 4><<<grid, kThreads, 0, st>>>(in(0), in(1), nullptr, out(2), nullptr, n); break;
      case Kernel::dropout_residual_add:
        dropout_residual_kernel<S><<<grid, kThreads, 0, st>>>(in(0), in(1), out(2), arg<uint8_t>(a, 3), n, a.s.dropout_seed,
                                                              math::dropout_threshold(a.s.dropout_p),
                                                              1.0f / (1.0f - a.s.dropout_p));
        break;
      case Kernel::adamw_step:
        adamw_kernel<S><<<grid, kThreads, 0, st>>>(out(0), in(1), out(2), out(3), n, math::adamw_constants(a.s));
        break;
      default: throw std::logic_error("launch_elementwise: not an elementwise kernel");
    }
    GPU_CHECK_LAUNCH();
  });
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
