// STREAM kernels (copy, the element-wise formulas of core/formulas/stream_ops.h) and the
// read-only reduction on GPUs: grid-stride loops over 16-byte vectors (4 fp32 or 8 16-bit
// elements per thread per step), fp32 arithmetic; `read` gives each partial sum
// (kernel_table.h) one block.
#pragma once

#include "bench_memory/gpu_common.cuh"
#include "core/formulas/stream_ops.h"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

// The bits of a copy are moved unchanged, 16 bytes per thread per step.
__global__ void __launch_bounds__(kThreads) copy_kernel(const uint8_t* src, uint8_t* dst, int64_t bytes) {
  const int64_t vecs = bytes / 16;
  for (int64_t v = global_thread(); v < vecs; v += grid_threads())
    reinterpret_cast<uint4*>(dst)[v] = reinterpret_cast<const uint4*>(src)[v];
  for (int64_t i = 16 * vecs + global_thread(); i < bytes; i += grid_threads()) dst[i] = src[i];
}

// out = op(x, y, q) per element (core/formulas/stream_ops.h); y is read only by two-operand
// ops. out may be x or y (in place): each element is read before it is written, by the same
// thread.
template <typename S, typename Op>
__global__ void __launch_bounds__(kThreads)
    stream_kernel(const typename S::T* x, const typename S::T* y, typename S::T* out, float q, int64_t n) {
  constexpr int V = kVec<S>;
  const Op op;
  for (int64_t i = global_thread() * V; i < n; i += grid_threads() * V) {
    float a[V], b[V];
    load_vec<S>(x, i, n, a);
    if (Op::inputs > 1) load_vec<S>(y, i, n, b);
#pragma unroll
    for (int k = 0; k < V; ++k) a[k] = op(a[k], Op::inputs > 1 ? b[k] : 0.0f, q);
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
    if (a.kernel == Kernel::read) {
      read_kernel<S><<<static_cast<unsigned>(read_slots(n)), kThreads, 0, st>>>(arg<const T>(a, 0), arg<float>(a, 1), n,
                                                                                read_chunk(n));
    } else {
      const StreamOperands o = stream_operands(kernel_desc(a.kernel));
      const T* y = o.y < 0 ? nullptr : arg<const T>(a, o.y);
      const bool launched = with_stream_op(a.kernel, [&](auto op) {
        stream_kernel<S, decltype(op)><<<grid, kThreads, 0, st>>>(arg<const T>(a, o.x), y, arg<T>(a, o.out), a.s.q, n);
      });
      if (!launched) throw std::logic_error("launch_stream: not a STREAM kernel");
    }
    GPU_CHECK_LAUNCH();
  });
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
