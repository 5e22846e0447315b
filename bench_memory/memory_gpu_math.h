// The ONLY vendor-specific part of the bench_memory kernels: warp width and shuffles, and the
// packed bf16 FMA of fma_chain (CUDA has __nv_bfloat162 FMA on sm_80+; HIP has no packed
// bf16 arithmetic, so bf16 chains run in fp32 there). Everything else in gpu_*.cuh is
// shared through core/backend/gpu_runtime.h.
#pragma once

#include <cstdint>

#include "core/backend/element_convert.h"
#include "core/backend/gpu_runtime.h"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

#if defined(GPUCAL_GPU_HIP)
constexpr int kWarpSize = 64;
__device__ __forceinline__ float warp_sum(float x) {
  for (int o = kWarpSize / 2; o > 0; o /= 2) x += __shfl_xor(x, o);
  return x;
}
__device__ __forceinline__ float warp_max(float x) {
  for (int o = kWarpSize / 2; o > 0; o /= 2) x = fmaxf(x, __shfl_xor(x, o));
  return x;
}
__device__ __forceinline__ float shfl_xor(float x, int o) { return __shfl_xor(x, o); }
// bf16 chains: 2 elements as fp32 (no packed bf16 FMA on CDNA).
struct Bf16Pair {
  float lo, hi;
};
__device__ __forceinline__ Bf16Pair bf16_pair(uint32_t bits) {
  return {__uint_as_float(bits << 16), __uint_as_float(bits & 0xffff0000u)};
}
__device__ __forceinline__ Bf16Pair bf16_fma2(Bf16Pair x, Bf16Pair m, Bf16Pair c) {
  return {fmaf(x.lo, m.lo, c.lo), fmaf(x.hi, m.hi, c.hi)};
}
__device__ __forceinline__ uint32_t bf16_pair_bits(Bf16Pair p) {
  return static_cast<uint32_t>(::gpucal::elem::float_to_bf16(p.lo)) |
         (static_cast<uint32_t>(::gpucal::elem::float_to_bf16(p.hi)) << 16);
}
#else
constexpr int kWarpSize = 32;
__device__ __forceinline__ float warp_sum(float x) {
  for (int o = kWarpSize / 2; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
__device__ __forceinline__ float warp_max(float x) {
  for (int o = kWarpSize / 2; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}
__device__ __forceinline__ float shfl_xor(float x, int o) { return __shfl_xor_sync(0xffffffffu, x, o); }
using Bf16Pair = __nv_bfloat162;
__device__ __forceinline__ Bf16Pair bf16_pair(uint32_t bits) {
  Bf16Pair p;
  __builtin_memcpy(&p, &bits, 4);
  return p;
}
__device__ __forceinline__ Bf16Pair bf16_fma2(Bf16Pair x, Bf16Pair m, Bf16Pair c) { return __hfma2(x, m, c); }
__device__ __forceinline__ uint32_t bf16_pair_bits(Bf16Pair p) {
  uint32_t bits;
  __builtin_memcpy(&bits, &p, 4);
  return bits;
}
#endif

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
