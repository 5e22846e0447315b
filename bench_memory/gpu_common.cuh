// Device helpers every bench_memory kernel family shares: storage types (fp32; bf16 and
// fp16 as 16-bit patterns converted to fp32 in registers), 16-byte vector loads and stores
// with a scalar tail, block-wide reductions, and launch geometry. Shared by CUDA and HIP.
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "bench_memory/launch_args.h"
#include "bench_memory/memory_gpu_math.h"
#include "bench_memory/op_math.h"
#include "core/backend/element_convert.h"
#include "core/backend/gpu_runtime.h"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

constexpr int kThreads = 256;  // every kernel's block size
constexpr int kMaxWarps = kThreads / kWarpSize;

struct F32 {
  using T = float;
  __device__ static float load(T v) { return v; }
  __device__ static T store(float f) { return f; }
};
struct BF16 {
  using T = uint16_t;
  __device__ static float load(T v) { return elem::bf16_to_float(v); }
  __device__ static T store(float f) { return elem::float_to_bf16(f); }
};
struct FP16 {
  using T = uint16_t;
  __device__ static float load(T v) { return __half2float(__ushort_as_half(v)); }
  __device__ static T store(float f) { return __half_as_ushort(__float2half_rn(f)); }
};

// Elements per 16-byte vector.
template <typename S>
constexpr int kVec = static_cast<int>(16 / sizeof(typename S::T));

// Loads elements [i, i + V) of p (V = kVec<S>) as floats: one 16-byte load when the span is
// whole (i + V <= n) and 16-byte aligned, else element by element up to n (the missing ones
// read 0).
template <typename S>
__device__ __forceinline__ void load_vec(const typename S::T* p, int64_t i, int64_t n, float* v) {
  using T = typename S::T;
  constexpr int V = kVec<S>;
  if (i + V <= n && (reinterpret_cast<uintptr_t>(p + i) & 15) == 0) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p + i);
    T e[V];
    __builtin_memcpy(e, &raw, 16);
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = S::load(e[k]);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = i + k < n ? S::load(p[i + k]) : 0.0f;
  }
}

template <typename S>
__device__ __forceinline__ void store_vec(typename S::T* p, int64_t i, int64_t n, const float* v) {
  using T = typename S::T;
  constexpr int V = kVec<S>;
  if (i + V <= n && (reinterpret_cast<uintptr_t>(p + i) & 15) == 0) {
    T e[V];
#pragma unroll
    for (int k = 0; k < V; ++k) e[k] = S::store(v[k]);
    uint4 raw;
    __builtin_memcpy(&raw, e, 16);
    *reinterpret_cast<uint4*>(p + i) = raw;
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (i + k < n) p[i + k] = S::store(v[k]);
  }
}

__device__ __forceinline__ int64_t global_thread() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }
__device__ __forceinline__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Sum (or max) over the block; every thread gets the result. `scratch` holds kMaxWarps floats.
__device__ __forceinline__ float block_sum(float x, float* scratch) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  x = warp_sum(x);
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < kMaxWarps; ++w) total += scratch[w];
  return total;
}
__device__ __forceinline__ float block_max(float x, float* scratch) {
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  x = warp_max(x);
  __syncthreads();
  if (lane == 0) scratch[warp] = x;
  __syncthreads();
  float m = -INFINITY;
  for (int w = 0; w < kMaxWarps; ++w) m = fmaxf(m, scratch[w]);
  return m;
}
// Online softmax state (running max m, sum s of exp(x - m)) combined over the block.
__device__ __forceinline__ void combine_max_sum(float& m, float& s, float m2, float s2) {
  const float mm = fmaxf(m, m2);
  if (mm == -INFINITY) return;  // both empty
  s = s * expf(m - mm) + s2 * expf(m2 - mm);
  m = mm;
}
__device__ __forceinline__ void block_max_sum(float& m, float& s, float* scratch) {
  for (int o = kWarpSize / 2; o > 0; o /= 2) combine_max_sum(m, s, shfl_xor(m, o), shfl_xor(s, o));
  const int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  __syncthreads();
  if (lane == 0) scratch[warp] = m, scratch[kMaxWarps + warp] = s;
  __syncthreads();
  m = -INFINITY, s = 0;
  for (int w = 0; w < kMaxWarps; ++w) combine_max_sum(m, s, scratch[w], scratch[kMaxWarps + w]);
}

// Blocks for a grid-stride loop over `items`, at most `per_sm` resident blocks per SM.
inline unsigned grid_for(int64_t items, int sms, int per_sm = 16) {
  const int64_t blocks = (items + kThreads - 1) / kThreads;
  const int64_t cap = sms > 0 ? static_cast<int64_t>(sms) * per_sm : 2048;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks < cap ? blocks : cap);
}

template <typename T>
T* arg(const LaunchArgs& a, int i) {
  return static_cast<T*>(a.tensors.at(static_cast<size_t>(i)));
}

inline gpuStream_t stream_of(const LaunchArgs& a) { return static_cast<gpuStream_t>(a.stream); }

template <typename F>
void with_storage(DType t, F&& f) {
  with_storage_types<F32, BF16, FP16>(t, std::forward<F>(f));
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
