// STREAM kernels (copy, scale, add, triad) and the read-only reduction on GPUs: grid-stride
// loops over 16-byte vectors (4 fp32 or 8 16-bit elements per thread per step), fp32
// arithmetic; `read` gives each partial sum (kernel_table.h) one block.
#pragma once

#include "bench_memory/gpu_common.cuh"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

// The bits of a copy are moved unchanged, 16 bytes per thread per step.
__global__ void __launch_bounds__(kThreads) copy_kernel(const uint8_t* src, uint8_t* dst, int64_t bytes) {
  const int64_t vecs = bytes / 16;
  for (int64_t v = global_thread(); v < vecs; v += grid_threads())
    reinterpret_cast<uint4*>(dst)[v] = reinterpret_cast<const uint4*>(src)[v];
  for (int64_t i = 16 * vecs + global_thread(); i < bytes; i += grid_threads()) dst[i] = src[i];
}

// op: 0 scale (out = q*x), 1 add (out = x + y), 2 triad (out = x + q*y).
template <typename S, int op>
__global__ void __launch_bounds__(kThreads)
    stream_kernel(const typename S::T* x, const typename S::T* y, typename S::T* out, float q, int64_t n) {
  constexpr int V = kVec<S>;
  for (int64_t i = global_thread() * V; i < n; i += grid_threads() * V) {
    float a[V], b[V];
    load_vec<S>(x, i, n, a);
    if (op != 0) load_vec<S>(y, i, n, b);
#pragma unroll
    for (int k = 0; k < V; ++k) a[k] = op == 0 ? q * a[k] : op == 1 ? a[k] + b[k] : a[k] + q * b[k];
    store_vec<S>(out, i, n, a);
  }
}

template <typename S>
__global__ void __launch_bounds__(kThreads) read_kernel(const typename S::T* x, float* sums, int64_t n, int64_t chunk) {
  __shared__ float scratch[2 * kMaxWarps];
  constexpr int V = kVec<S>;
  const int64_t lo = blockIdx.x * chunk, hi = lo + chunk < n ? lo + chunk : n;
  float s = 0;
  // Aligned vectors inside [lo, hi); chunk boundaries need not be vector-aligned.
  const int64_t first = (lo + V - 1) / V * V < hi ? (lo + V - 1) / V * V : hi;
  for (int64_t i = lo + threadIdx.x; i < first; i += kThreads) s += S::load(x[i]);
  for (int64_t i = first + static_cast<int64_t>(threadIdx.x) * V; i < hi; i += static_cast<int64_t>(kThreads) * V) {
    float v[V];
    load_vec<S>(x, i, hi, v);
#pragma unroll
    for (int k = 0; k < V; ++k) s += v[k];
  }
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

inline void launch_stream(const LaunchArgs& a, int sms) {
  const int64_t n = a.dims.n;
  const gpuStream_t st = stream_of(a);
  if (a.kernel == Kernel::copy) {
    const int64_t bytes = n * static_cast<int64_t>(dtype_bytes(a.dtype));
    copy_kernel<<<grid_for(bytes / 16 + 1, sms), kThreads, 0, st>>>(arg<const uint8_t>(a, 0), arg<uint8_t>(a, 1), bytes);
    GPU_CHECK_LAUNCH();
    return;
  }
  with_storage(a.dtype, [&](auto s) {
    using S = decltype(s);
    using T = typename S::T;
    const unsigned grid = grid_for(n / kVec<S> + 1, sms);
    switch (a.kernel) {
      case Kernel::scale:
        stream_kernel<S, 0><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), nullptr, arg<T>(a, 1), a.s.q, n);
        break;
      case Kernel::add:
        stream_kernel<S, 1><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), arg<const T>(a, 1), arg<T>(a, 2), a.s.q, n);
        break;
      case Kernel::triad:
        stream_kernel<S, 2><<<grid, kThreads, 0, st>>>(arg<const T>(a, 0), arg<const T>(a, 1), arg<T>(a, 2), a.s.q, n);
        break;
      case Kernel::read:
        read_kernel<S><<<static_cast<unsigned>(read_slots(n)), kThreads, 0, st>>>(arg<const T>(a, 0), arg<float>(a, 1), n,
                                                                                  read_chunk(n));
        break;
      default: throw std::logic_error("launch_stream: not a STREAM kernel");
    }
    GPU_CHECK_LAUNCH();
  });
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
