// fma_chain on GPUs: each thread holds 8 independent chains of packed values (8 fp32, 8
// half2 = 16 fp16, 8 bf16 pairs = 16 bf16) in registers and runs kFmaSteps dependent FMAs on
// each, so many FMAs are in flight per warp; loads and stores are 16 bytes. The chain count
// keeps registers modest so occupancy hides FMA latency too. Elements past the last whole
// group of a thread run the same chain one at a time in fp32 storage math.
#pragma once

#include "bench_memory/gpu_common.cuh"

namespace gpucal::memory::GPUCAL_GPU_NS::detail {

constexpr int kChains = 8;

// Group of 32 bytes per thread: 8 fp32, or 16 16-bit elements as 8 pairs.
__global__ void __launch_bounds__(kThreads) fma_chain_f32(const float* x, float* y, int64_t n, float m, float c, int steps) {
  const int64_t groups = n / kChains;
  for (int64_t g = global_thread(); g < groups; g += grid_threads()) {
    float r[kChains];
    const uint4 a = reinterpret_cast<const uint4*>(x)[2 * g], b = reinterpret_cast<const uint4*>(x)[2 * g + 1];
    __builtin_memcpy(r, &a, 16);
    __builtin_memcpy(r + 4, &b, 16);
    for (int s = 0; s < steps; ++s)
#pragma unroll
      for (int j = 0; j < kChains; ++j) r[j] = fmaf(r[j], m, c);
    uint4 oa, ob;
    __builtin_memcpy(&oa, r, 16);
    __builtin_memcpy(&ob, r + 4, 16);
    reinterpret_cast<uint4*>(y)[2 * g] = oa;
    reinterpret_cast<uint4*>(y)[2 * g + 1] = ob;
  }
  for (int64_t i = groups * kChains + global_thread(); i < n; i += grid_threads()) {
    float v = x[i];
    for (int s = 0; s < steps; ++s) v = fmaf(v, m, c);
    y[i] = v;
  }
}

__global__ void __launch_bounds__(kThreads)
    fma_chain_f16(const uint16_t* x, uint16_t* y, int64_t n, float m, float c, int steps) {
  const int64_t groups = n / (2 * kChains);
  const __half2 m2 = __float2half2_rn(m), c2 = __float2half2_rn(c);
  for (int64_t g = global_thread(); g < groups; g += grid_threads()) {
    __half2 r[kChains];
    const uint4 a = reinterpret_cast<const uint4*>(x)[2 * g], b = reinterpret_cast<const uint4*>(x)[2 * g + 1];
    __builtin_memcpy(r, &a, 16);
    __builtin_memcpy(r + 4, &b, 16);
    for (int s = 0; s < steps; ++s)
#pragma unroll
      for (int j = 0; j < kChains; ++j) r[j] = __hfma2(r[j], m2, c2);
    uint4 oa, ob;
    __builtin_memcpy(&oa, r, 16);
    __builtin_memcpy(&ob, r + 4, 16);
    reinterpret_cast<uint4*>(y)[2 * g] = oa;
    reinterpret_cast<uint4*>(y)[2 * g + 1] = ob;
  }
  for (int64_t i = groups * 2 * kChains + global_thread(); i < n; i += grid_threads()) {
    __half v = __ushort_as_half(x[i]);
    const __half mh = __float2half_rn(m), ch = __float2half_rn(c);
    for (int s = 0; s < steps; ++s) v = __hfma(v, mh, ch);
    y[i] = __half_as_ushort(v);
  }
}

__global__ void __launch_bounds__(kThreads)
    fma_chain_bf16(const uint16_t* x, uint16_t* y, int64_t n, float m, float c, int steps) {
  const int64_t groups = n / (2 * kChains);
  const uint32_t mb = elem::float_to_bf16(m), cb = elem::float_to_bf16(c);
  const Bf16Pair m2 = bf16_pair(mb | (mb << 16)), c2 = bf16_pair(cb | (cb << 16));
  for (int64_t g = global_thread(); g < groups; g += grid_threads()) {
    uint32_t bits[kChains];
    const uint4 a = reinterpret_cast<const uint4*>(x)[2 * g], b = reinterpret_cast<const uint4*>(x)[2 * g + 1];
    __builtin_memcpy(bits, &a, 16);
    __builtin_memcpy(bits + 4, &b, 16);
    Bf16Pair r[kChains];
#pragma unroll
    for (int j = 0; j < kChains; ++j) r[j] = bf16_pair(bits[j]);
    for (int s = 0; s < steps; ++s)
#pragma unroll
      for (int j = 0; j < kChains; ++j) r[j] = bf16_fma2(r[j], m2, c2);
#pragma unroll
    for (int j = 0; j < kChains; ++j) bits[j] = bf16_pair_bits(r[j]);
    uint4 oa, ob;
    __builtin_memcpy(&oa, bits, 16);
    __builtin_memcpy(&ob, bits + 4, 16);
    reinterpret_cast<uint4*>(y)[2 * g] = oa;
    reinterpret_cast<uint4*>(y)[2 * g + 1] = ob;
  }
  for (int64_t i = groups * 2 * kChains + global_thread(); i < n; i += grid_threads()) {
    float v = elem::bf16_to_float(x[i]);
    // One bf16 rounding per step, as the packed path.
    for (int s = 0; s < steps; ++s) v = elem::bf16_to_float(elem::float_to_bf16(fmaf(v, m, c)));
    y[i] = elem::float_to_bf16(v);
  }
}

inline void launch_fma_chain(const LaunchArgs& a, int sms) {
  const int64_t n = a.dims.n;
  const gpuStream_t st = stream_of(a);
  const int per = a.dtype == DType::fp32 ? kChains : 2 * kChains;
  // Enough resident threads to hide FMA latency: up to 8 blocks of 256 per SM.
  const unsigned grid = grid_for(n / per + 1, sms, 8);
  switch (a.dtype) {
    case DType::fp32:
      fma_chain_f32<<<grid, kThreads, 0, st>>>(arg<const float>(a, 0), arg<float>(a, 1), n, a.s.fma_m, a.s.fma_c, a.s.fma_steps);
      break;
    case DType::fp16:
      fma_chain_f16<<<grid, kThreads, 0, st>>>(arg<const uint16_t>(a, 0), arg<uint16_t>(a, 1), n, a.s.fma_m, a.s.fma_c,
                                                a.s.fma_steps);
      break;
    case DType::bf16:
      fma_chain_bf16<<<grid, kThreads, 0, st>>>(arg<const uint16_t>(a, 0), arg<uint16_t>(a, 1), n, a.s.fma_m, a.s.fma_c,
                                                 a.s.fma_steps);
      break;
    default: throw std::invalid_argument("fma_chain runs fp32, fp16 or bf16");
  }
  GPU_CHECK_LAUNCH();
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS::detail
