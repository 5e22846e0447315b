// The pieces both flash passes share (flash_kernels.cuh): tile shapes per head_dim, the
// kernels' arguments, shared-memory tile copies and the warp's tile product.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bench_attention/flash_mma.h"
#include "core/backend/gpu_runtime.h"

namespace gpucal::attention::GPUCAL_GPU_NS {
namespace flash_detail {

constexpr int kPad = 8;  // smem row padding (elements): 16-byte aligned rows, no bank conflicts
constexpr float kLog2e = 1.4426950408889634f;

// Tile shapes. 16 rows per warp; HIP's 64 KiB LDS asks for smaller tiles at d >= 128.
template <int D>
struct FwdCfg {
  static constexpr int kBlockM = (kSmallSmem && D >= 128) ? 64 : 128;            // query rows
  static constexpr int kBlockN = D <= 128 ? 64 : (kSmallSmem ? 16 : 32);         // keys per step
  static constexpr int kWarps = kBlockM / 16;
  static constexpr int kThreads = kWarps * kWarpSize;
  static constexpr int kLd = D + kPad;
  static constexpr size_t kSmemBytes = size_t(kBlockM + 2 * kBlockN) * kLd * sizeof(uint16_t);  // sQ sK sV
};
template <int D>
struct BwdCfg {
  static constexpr int kBlockN = (kSmallSmem && D == 256) ? 32 : 64;             // keys per block
  static constexpr int kBlockM = D == 64 ? 64 : ((kSmallSmem && D == 256) ? 16 : 32);  // query rows per step
  // A 32-lane warp cannot hold dK and dV (16 x 256 fp32 each) in registers: split columns.
  static constexpr int kSplit = (kWarpSize == 32 && D == 256) ? 2 : 1;
  static constexpr int kDc = D / kSplit;  // dK/dV/dQ columns per block
  static constexpr int kWarps = kBlockN / 16;
  static constexpr int kThreads = kWarps * kWarpSize;
  static constexpr int kLd = D + kPad;
  static constexpr int kLdS = kBlockN + kPad;  // sdS row stride
  static constexpr size_t kSmemBytes = size_t(2 * kBlockN + 2 * kBlockM) * kLd * sizeof(uint16_t)  // sK sV sQ sdO
                                       + size_t(kBlockM) * kLdS * sizeof(uint16_t)                 // sdS
                                       + 2 * size_t(kBlockM) * sizeof(float);                      // sLse sDelta
};

struct FwdArgs {
  const uint16_t* q;
  const uint16_t* k;
  const uint16_t* v;
  uint16_t* o;
  float* lse;
  int64_t q_batch, q_head, q_seq;     // element strides of Q and O
  int64_t kv_batch, kv_head, kv_seq;  // element strides of K and V
  int heads, group, seq_q, seq_kv;    // group = heads / kv_heads
  float scale_log2;                   // softmax scale * log2(e): exp(x) = exp2(s * scale_log2)
  float scale;
  bool causal;
};

struct BwdArgs {
  const uint16_t* q;
  const uint16_t* k;
  const uint16_t* v;
  const uint16_t* d_o;
  const float* lse;
  const float* delta;
  float* dq_acc;  // fp32 [batch][heads][seq_q][D], zeroed before the kernel
  uint16_t* dk;
  uint16_t* dv;
  int64_t q_batch, q_head, q_seq;     // Q, dO (and O, dQ)
  int64_t kv_batch, kv_head, kv_seq;  // K, V, dK, dV
  int heads, group, seq_q, seq_kv;
  float scale_log2, scale;
  bool causal;
};

// One thread's share of copying rows [row0, row0 + kRows) x columns [0, D) of a [seq][D]
// slice with row stride `stride` to smem with row stride ld, in 16-byte chunks; rows >=
// nrows are zero-filled. issue() starts it, land() finishes it (flash_mma.h: nothing to do
// on CUDA, where cp.async writes shared memory itself; the register-held chunks' stores on
// HIP). Call land() before the async_wait_all() that precedes the tile's use.
template <int kRows, int D, int kThreads>
struct TileCopy {
  static constexpr int kChunksPerRow = D / 8, kChunks = kRows * kChunksPerRow;
  static constexpr int kIters = (kChunks + kThreads - 1) / kThreads;
  uint16_t* s = nullptr;
  int ld = 0;
  Staged16 held[kIters];

  __device__ __forceinline__ void issue(uint16_t* smem, int smem_ld, const uint16_t* g, int64_t stride, int row0,
                                        int nrows) {
    s = smem;
    ld = smem_ld;
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int c = static_cast<int>(threadIdx.x) + it * kThreads;
      if (kChunks % kThreads != 0 && c >= kChunks) break;
      const int r = c / kChunksPerRow, col = (c % kChunksPerRow) * 8;
      const bool valid = row0 + r < nrows;
      copy16_issue(held[it], s + r * ld + col, valid ? g + (row0 + r) * stride + col : g, valid);
    }
  }
  __device__ __forceinline__ void land() {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int c = static_cast<int>(threadIdx.x) + it * kThreads;
      if (kChunks % kThreads != 0 && c >= kChunks) break;
      copy16_land(s + (c / kChunksPerRow) * ld + (c % kChunksPerRow) * 8, held[it]);
    }
  }
};

// A tile copy that is waited for right away (no compute to overlap it with).
template <int kRows, int D, int kThreads>
__device__ __forceinline__ void load_tile(uint16_t* s, int ld, const uint16_t* g, int64_t stride, int row0,
                                          int nrows) {
  TileCopy<kRows, D, kThreads> copy;
  copy.issue(s, ld, g, stride, row0, nrows);
  copy.land();
}

// c[t] = A * B_t^T for t < kTiles, reduced over the head dimension in kDT steps of 16:
// A is this warp's 16 rows at `a_rows`, B_t the 16 rows at `b_rows + 16 t ld`, both in
// shared memory with row stride ld. Serves S = Q K^T (forward), S^T = K Q^T and
// dP^T = V dO^T (backward).
template <bool kBf16, int kTiles, int kDT>
__device__ __forceinline__ void rows_times_tiles_t(FragC (&c)[kTiles], const uint16_t* a_rows,
                                                   const uint16_t* b_rows, int ld) {
#pragma unroll
  for (int t = 0; t < kTiles; ++t) zero(c[t]);
#pragma unroll
  for (int kk = 0; kk < kDT; ++kk) {
    FragA fa;
    load_a(fa, a_rows + 16 * kk, ld);
#pragma unroll
    for (int t = 0; t < kTiles; ++t) {
      FragB fb;
      load_b_nk(fb, b_rows + 16 * t * ld + 16 * kk, ld);
      mma<kBf16>(c[t], fa, fb);
    }
  }
}

}  // namespace flash_detail
}  // namespace gpucal::attention::GPUCAL_GPU_NS
