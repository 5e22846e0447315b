// The reference GEMM check kernel, written once for CUDA and HIP through
// core/backend/gpu_runtime.h (see gemm_reference.h). Each 16x16-thread block computes a 64x64
// tile of D, 4x4 elements per thread, staging 16-deep slices of A and B in shared memory;
// it also sums |a b| per element for the normwise error, compares with the library's D,
// and reduces the block's largest error before one atomic per block.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "bench_gemm/gemm_formulas.h"
#include "bench_gemm/gemm_reference.h"
#include "core/backend/dtype.h"
#include "core/backend/element_convert.h"
#include "core/backend/gpu_runtime.h"

namespace gpucal::gemm::GPUCAL_GPU_NS {

namespace {

constexpr int kTile = static_cast<int>(kReferenceTile), kDepth = 16, kThreads = 16, kPerThread = kTile / kThreads;

template <int TypeCode, typename Acc>
__device__ inline Acc load_elem(const void* base, int64_t i) {
  return static_cast<Acc>(elem::load_as_double(base, static_cast<uint64_t>(i), TypeCode));
}

template <int AType, int BType, typename Acc>
__global__ void __launch_bounds__(kThreads* kThreads)
    reference_check_kernel(ReferenceArgs r, unsigned* max_err_bits, unsigned long long* bad) {
  __shared__ Acc as[kDepth][kTile + 1];
  __shared__ Acc bs[kDepth][kTile + 1];
  __shared__ float block_max[kThreads * kThreads];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreads + tx;
  const int64_t col_tile = static_cast<int64_t>(blockIdx.y) * r.tile_step + blockIdx.x % r.tile_step;
  if (col_tile * kTile >= r.n) return;  // the whole block: no barrier is skipped by part of it
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kTile, col0 = col_tile * kTile;
  const int64_t batch = blockIdx.z;
  const int64_t a_off = batch * r.stride_a, b_off = batch * r.stride_b;
  Acc acc[kPerThread][kPerThread] = {}, mag[kPerThread][kPerThread] = {};
  for (int64_t k0 = 0; k0 < r.k; k0 += kDepth) {
    for (int i = tid; i < kTile * kDepth; i += kThreads * kThreads) {
      // A slice: rows fastest (coalesced for non-transposed column-major A).
      const int rr = i % kTile, kk = i / kTile;
      const int64_t row = row0 + rr, kg = k0 + kk;
      Acc v = 0;
      if (row < r.m && kg < r.k) v = load_elem<AType, Acc>(r.a, a_off + (r.trans_a ? row * r.lda + kg : kg * r.lda + row));
      as[kk][rr] = v;
      // B slice: depth fastest (coalesced for non-transposed column-major B).
      const int kb = i % kDepth, cc = i / kDepth;
      const int64_t col = col0 + cc, kgb = k0 + kb;
      Acc w = 0;
      if (col < r.n && kgb < r.k) w = load_elem<BType, Acc>(r.b, b_off + (r.trans_b ? kgb * r.ldb + col : col * r.ldb + kgb));
      bs[kb][cc] = w;
    }
    __syncthreads();
    for (int kk = 0; kk < kDepth; ++kk) {
      Acc av[kPerThread], bv[kPerThread];
      for (int i = 0; i < kPerThread; ++i) av[i] = as[kk][tx + kThreads * i];
      for (int j = 0; j < kPerThread; ++j) bv[j] = bs[kk][ty + kThreads * j];
      for (int i = 0; i < kPerThread; ++i)
        for (int j = 0; j < kPerThread; ++j) {
          acc[i][j] += av[i] * bv[j];
          mag[i][j] += (av[i] < 0 ? -av[i] : av[i]) * (bv[j] < 0 ? -bv[j] : bv[j]);
        }
    }
    __syncthreads();
  }
  const double scale = r.alpha * r.ab_scale, abs_scale = scale < 0 ? -scale : scale;
  float worst = 0;
  unsigned long long my_bad = 0;
  for (int i = 0; i < kPerThread; ++i)
    for (int j = 0; j < kPerThread; ++j) {
      const int64_t row = row0 + tx + kThreads * i, col = col0 + ty + kThreads * j;
      if (row >= r.m || col >= r.n) continue;
      const int64_t ci = batch * r.stride_c + col * r.ldc + row;
      double ref = scale * static_cast<double>(acc[i][j]);
      double norm = abs_scale * static_cast<double>(mag[i][j]);
      if (r.beta != 0) {
        const double c = r.beta * elem::load_as_double(r.c, static_cast<uint64_t>(ci), r.c_type);
        ref += c;
        norm += c < 0 ? -c : c;
      }
      const double d = elem::load_as_double(r.d, static_cast<uint64_t>(ci), r.d_type);
      const double diff = d - ref;
      const double err = (diff < 0 ? -diff : diff) / (norm > 0 ? norm : 1.0);
      if (!(err <= r.tolerance)) ++my_bad;  // NaN-safe
      const float e = err == err ? static_cast<float>(err) : INFINITY;
      worst = e > worst ? e : worst;
    }
  if (my_bad) atomicAdd(bad, my_bad);
  block_max[tid] = worst;
  __syncthreads();
  for (int s = kThreads * kThreads / 2; s > 0; s >>= 1) {
    if (tid < s && block_max[tid + s] > block_max[tid]) block_max[tid] = block_max[tid + s];
    __syncthreads();
  }
  // Non-negative floats order like their bit patterns, so an unsigned max is a float max.
  if (tid == 0) atomicMax(max_err_bits, elem::float_bits(block_max[0]));
}

template <int AType, int BType, typename Acc>
void launch_check(const ReferenceArgs& r, unsigned* max_err_bits, unsigned long long* bad) {
  if (r.batch > 65535) throw std::runtime_error("reference check: batch above 65535 is not supported");
  if (r.tile_step < 1) throw std::runtime_error("reference check: tile_step must be at least 1");
  const int64_t col_tiles = (r.n + kTile - 1) / kTile;
  dim3 grid(static_cast<unsigned>((r.m + kTile - 1) / kTile),
            static_cast<unsigned>((col_tiles + r.tile_step - 1) / r.tile_step), static_cast<unsigned>(r.batch));
  dim3 block(kThreads, kThreads);
  reference_check_kernel<AType, BType, Acc><<<grid, block, 0, static_cast<gpuStream_t>(r.stream)>>>(r, max_err_bits, bad);
  GPU_CHECK_LAUNCH();
}

constexpr int code(DType t) { return static_cast<int>(t); }

}  // namespace

ReferenceResult reference_check(const ReferenceArgs& r) {
  struct Counters {
    unsigned max_err_bits;
    unsigned long long bad;
  };
  Counters* dev = nullptr;
  GPU_CHECK(gpuMalloc(reinterpret_cast<void**>(&dev), sizeof(Counters)));
  ReferenceResult out;
  try {
    auto stream = static_cast<gpuStream_t>(r.stream);
    GPU_CHECK(gpuMemsetAsync(dev, 0, sizeof(Counters), stream));
    const int a = r.a_type, b = r.b_type;
    if (a == code(DType::fp64) && b == a)
      launch_check<code(DType::fp64), code(DType::fp64), double>(r, &dev->max_err_bits, &dev->bad);
    else if ((a == code(DType::fp32) || a == code(DType::tf32)) && b == a)
      launch_check<code(DType::fp32), code(DType::fp32), float>(r, &dev->max_err_bits, &dev->bad);
    else if (a == code(DType::fp16) && b == a)
      launch_check<code(DType::fp16), code(DType::fp16), float>(r, &dev->max_err_bits, &dev->bad);
    else if (a == code(DType::bf16) && b == a)
      launch_check<code(DType::bf16), code(DType::bf16), float>(r, &dev->max_err_bits, &dev->bad);
    else if (a == code(DType::fp8_e4m3) && b == code(DType::fp8_e4m3))
      launch_check<code(DType::fp8_e4m3), code(DType::fp8_e4m3), float>(r, &dev->max_err_bits, &dev->bad);
    else if (a == code(DType::fp8_e5m2) && b == code(DType::fp8_e4m3))
      launch_check<code(DType::fp8_e5m2), code(DType::fp8_e4m3), float>(r, &dev->max_err_bits, &dev->bad);
    else if (a == code(DType::int8) && b == a)
      launch_check<code(DType::int8), code(DType::int8), double>(r, &dev->max_err_bits, &dev->bad);
    else
      throw std::runtime_error("reference check: no kernel for input types " + std::to_string(a) + " x " +
                               std::to_string(b));
    Counters host{};
    GPU_CHECK(gpuMemcpyAsync(&host, dev, sizeof host, gpuMemcpyDeviceToHost, stream));
    GPU_CHECK(gpuStreamSynchronize(stream));
    out.max_rel_err = elem::bits_float(host.max_err_bits);
    out.bad = host.bad;
    out.checked = reference_checked_elements(r.m, r.n, r.batch, r.tile_step);
  } catch (...) {
    (void)gpuFree(dev);
    throw;
  }
  (void)gpuFree(dev);
  return out;
}

}  // namespace gpucal::gemm::GPUCAL_GPU_NS
