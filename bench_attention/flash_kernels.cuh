// gpucal's portable fused attention ("flash"), FlashAttention-2 style, written once for
// CUDA and HIP. The vendor differences (tensor-core MMA, fragment layouts, async copies)
// live in flash_mma.h; everything here is shared. Included by exactly one translation unit
// per vendor (flash_attention_cuda.cu, flash_attention_hip.hip).
//
// Notation: s = Q K^T (raw scores), x = scale * s, P = softmax_rows(x), O = P V,
// lse_i = log sum_j exp(x_ij) (natural log). Causal is top-left: query i sees keys j <= i.
// All MMAs are warp-wide 16x16x16 tiles (flash_mma.h): a warp owns 16 rows of a tile.
//
// Forward (one block = kBlockM query rows of one (batch, head)): Q tile in smem; loop over
// K/V blocks of kBlockN keys; S = Q K^T per warp in registers; fp32 online softmax
// (running row max m, running row sum l, O rescaled by exp(m_old - m_new)); P converted
// in registers to the A operand of O += P V. Loads are double-buffered against compute
// FA2-style: V_j streams in while S_j is computed, K_{j+1} while P_j V_j is.
//
// Backward (one block = kBlockN keys of one (batch, kv head), split in kSplit column
// chunks of dK/dV/dQ when registers demand): K, V in smem and dK, dV accumulators in
// registers for the whole run; loop over every query head of the GQA group and every
// query block of kBlockM rows: recompute S^T = K Q^T, P^T = exp(x^T - lse), dV += P^T dO,
// dP^T = V dO^T, dS^T = P^T (dP^T - Delta), dK += dS^T Q, and dQ += dS K into an fp32
// workspace with atomicAdd (several key blocks touch each dQ row). Because one block owns
// all query heads of its kv head, dK/dV need no atomics and are deterministic even for
// GQA/MQA. Delta = rowsum(dO * O) comes from a preprocessing kernel; a final kernel
// scales and converts dQ to the output dtype.
#pragma once

#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "bench_attention/flash_attention.h"
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

template <int D, bool kBf16>
__global__ void __launch_bounds__(FwdCfg<D>::kThreads) flash_fwd_kernel(const FwdArgs a) {
  using Cfg = FwdCfg<D>;
  constexpr int kBM = Cfg::kBlockM, kBN = Cfg::kBlockN, kLd = Cfg::kLd, kThreads = Cfg::kThreads;
  constexpr int kNT = kBN / 16, kDT = D / 16;  // 16-wide key tiles, 16-wide head-dim tiles
  extern __shared__ __align__(16) unsigned char smem_raw[];
  uint16_t* sQ = reinterpret_cast<uint16_t*>(smem_raw);  // [kBM][kLd], later reused for O
  uint16_t* sK = sQ + kBM * kLd;                         // [kBN][kLd]
  uint16_t* sV = sK + kBN * kLd;                         // [kBN][kLd]

  const int m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);  // longest causal blocks first
  const int h = blockIdx.y, b = blockIdx.z, hk = h / a.group;       // GQA: kv head of query head h
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int m0 = m_block * kBM;
  const int wrow0 = m0 + 16 * warp;  // this warp's first query row
  const uint16_t* q = a.q + b * a.q_batch + h * a.q_head;
  const uint16_t* k = a.k + b * a.kv_batch + hk * a.kv_head;
  const uint16_t* v = a.v + b * a.kv_batch + hk * a.kv_head;

  // Causal: the block's last row m0+kBM-1 sees keys < m0+kBM; later key blocks are skipped.
  const int kv_end = a.causal ? (a.seq_kv < m0 + kBM ? a.seq_kv : m0 + kBM) : a.seq_kv;
  const int n_blocks = (kv_end + kBN - 1) / kBN;

  load_tile<kBM, D, kThreads>(sQ, kLd, q, a.q_seq, m0, a.seq_q);
  load_tile<kBN, D, kThreads>(sK, kLd, k, a.kv_seq, 0, a.seq_kv);
  async_commit();

  FragC o[kDT];
#pragma unroll
  for (int dt = 0; dt < kDT; ++dt) zero(o[dt]);
  float m_run[kAccRows], l_run[kAccRows];  // per row held by this lane: raw-score max, partial sum
#pragma unroll
  for (int r = 0; r < kAccRows; ++r) m_run[r] = -INFINITY, l_run[r] = 0.f;

  // The copies that overlap compute: V_nb during S_nb, K_{nb+1} during P_nb V_nb.
  TileCopy<kBN, D, kThreads> v_copy, k_copy;
  for (int nb = 0; nb < n_blocks; ++nb) {
    const int n0 = nb * kBN;
    if (nb > 0) k_copy.land();
    async_wait_all();
    __syncthreads();  // K_nb (and Q) visible; every warp finished P V of the previous step
    v_copy.issue(sV, kLd, v, a.kv_seq, n0, a.seq_kv);
    async_commit();

    // S = Q K^T for this warp's 16 rows x kBN keys.
    FragC s[kNT];
    rows_times_tiles_t<kBf16, kNT, kDT>(s, sQ + 16 * warp * kLd, sK, kLd);
    // Mask keys past seq_kv (ragged last block) and, causally, keys after the query row.
    if (n0 + kBN > a.seq_kv || (a.causal && n0 + kBN - 1 > wrow0)) {
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int e = 0; e < kAccElems; ++e) {
          const int col = n0 + 16 * nt + acc_col(e), row = wrow0 + acc_row(e);
          if (col >= a.seq_kv || (a.causal && col > row)) s[nt].v[e] = -INFINITY;
        }
    }
    // Online softmax: new row max, rescale l and O by exp(scale * (m_old - m_new)).
    float m_new[kAccRows], m_base[kAccRows], corr[kAccRows];
#pragma unroll
    for (int r = 0; r < kAccRows; ++r) m_new[r] = m_run[r];
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < kAccElems; ++e) m_new[acc_slot(e)] = fmaxf(m_new[acc_slot(e)], s[nt].v[e]);
#pragma unroll
    for (int r = 0; r < kAccRows; ++r) {
      m_new[r] = row_max(m_new[r]);
      const float m_use = m_new[r] == -INFINITY ? 0.f : m_new[r];  // all masked so far: avoid inf - inf
      corr[r] = exp2f((m_run[r] - m_use) * a.scale_log2);         // 0 when m_run = -inf
      m_base[r] = m_use * a.scale_log2;
      m_run[r] = m_new[r];
      l_run[r] *= corr[r];
    }
#pragma unroll
    for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
      for (int e = 0; e < kAccElems; ++e) o[dt].v[e] *= corr[acc_slot(e)];
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < kAccElems; ++e) {
        const float p = exp2f(fmaf(s[nt].v[e], a.scale_log2, -m_base[acc_slot(e)]));
        s[nt].v[e] = p;
        l_run[acc_slot(e)] += p;  // lane-partial; reduced across lanes once at the end
      }

    v_copy.land();
    async_wait_all();
    __syncthreads();  // V_nb visible; every warp finished reading K_nb
    if (nb + 1 < n_blocks) k_copy.issue(sK, kLd, k, a.kv_seq, n0 + kBN, a.seq_kv);
    async_commit();

    // O += P V: P's accumulator tile kt is the A operand for keys 16kt..16kt+15.
#pragma unroll
    for (int kt = 0; kt < kNT; ++kt) {
      FragA pa;
      acc_to_a<kBf16>(pa, s[kt]);
#pragma unroll
      for (int dt = 0; dt < kDT; ++dt) {
        FragB vb;
        load_b_kn(vb, sV + 16 * kt * kLd + 16 * dt, kLd);
        mma<kBf16>(o[dt], pa, vb);
      }
    }
  }
  async_wait_all();

  // Epilogue: O /= l, lse = scale * m + log(l). Only this warp ever read its 16 rows of sQ,
  // and the last barrier above ordered those reads before these writes.
  float inv_l[kAccRows];
#pragma unroll
  for (int r = 0; r < kAccRows; ++r) {
    const float l = row_sum(l_run[r]);
    inv_l[r] = l > 0.f ? 1.f / l : 0.f;
    const int row = wrow0 + slot_row(r);
    if (row_leader() && row < a.seq_q)
      a.lse[(static_cast<int64_t>(b) * a.heads + h) * a.seq_q + row] =
          l > 0.f ? m_run[r] * a.scale + logf(l) : INFINITY;
  }
#pragma unroll
  for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
    for (int e = 0; e < kAccElems; ++e)
      sQ[(16 * warp + acc_row(e)) * kLd + 16 * dt + acc_col(e)] = float_to_bits<kBf16>(o[dt].v[e] * inv_l[acc_slot(e)]);
  __syncthreads();
  uint16_t* out = a.o + b * a.q_batch + h * a.q_head;
  for (int c = static_cast<int>(threadIdx.x); c < kBM * (D / 8); c += kThreads) {
    const int r = c / (D / 8), col = (c % (D / 8)) * 8;
    if (m0 + r < a.seq_q)
      *reinterpret_cast<uint4*>(out + (m0 + r) * a.q_seq + col) = *reinterpret_cast<const uint4*>(sQ + r * kLd + col);
  }
}

// Delta[row] = sum_d dO[row][d] * O[row][d] (fp32, from the dtype values), rows in
// [batch][heads][seq_q] order. 32 threads per row whatever the warp size, reduced in smem.
template <int D, bool kBf16>
__global__ void __launch_bounds__(256) flash_bwd_delta_kernel(const uint16_t* o, const uint16_t* d_o, float* delta,
                                                              int64_t s_batch, int64_t s_head, int64_t s_seq,
                                                              int heads, int seq_q, int64_t rows) {
  __shared__ float red[256];
  const int tid = threadIdx.x, j = tid % 32;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * 8 + tid / 32;
  float acc = 0.f;
  if (row < rows) {
    const int64_t i = row % seq_q, bh = row / seq_q, h = bh % heads, b = bh / heads;
    const int64_t off = b * s_batch + h * s_head + i * s_seq;
    for (int d = j; d < D; d += 32) acc += bits_to_float<kBf16>(o[off + d]) * bits_to_float<kBf16>(d_o[off + d]);
  }
  red[tid] = acc;
  __syncthreads();
  for (int step = 16; step > 0; step >>= 1) {
    if (j < step) red[tid] += red[tid + step];
    __syncthreads();
  }
  if (j == 0 && row < rows) delta[row] = red[tid];
}

template <int D, bool kBf16>
__global__ void __launch_bounds__(BwdCfg<D>::kThreads) flash_bwd_kernel(const BwdArgs a) {
  using Cfg = BwdCfg<D>;
  constexpr int kBN = Cfg::kBlockN, kBM = Cfg::kBlockM, kLd = Cfg::kLd, kLdS = Cfg::kLdS;
  constexpr int kThreads = Cfg::kThreads, kWarps = Cfg::kWarps, kDc = Cfg::kDc;
  constexpr int kMT = kBM / 16, kNT = kBN / 16, kDT = D / 16, kDcT = kDc / 16;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  uint16_t* sK = reinterpret_cast<uint16_t*>(smem_raw);  // [kBN][kLd]
  uint16_t* sV = sK + kBN * kLd;                         // [kBN][kLd]
  uint16_t* sQ = sV + kBN * kLd;                         // [kBM][kLd]
  uint16_t* sdO = sQ + kBM * kLd;                        // [kBM][kLd]
  uint16_t* sdS = sdO + kBM * kLd;                       // [kBM][kLdS]: dS as [query][key]
  float* sLse = reinterpret_cast<float*>(sdS + kBM * kLdS);
  float* sDelta = sLse + kBM;

  const int n0 = blockIdx.x * kBN;
  const int hk = blockIdx.y / Cfg::kSplit, d0 = (blockIdx.y % Cfg::kSplit) * kDc;  // kv head, column chunk
  const int b = blockIdx.z;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int wkv0 = n0 + 16 * warp;  // this warp's first key row
  const int64_t kv_off = b * a.kv_batch + hk * a.kv_head;

  load_tile<kBN, D, kThreads>(sK, kLd, a.k + kv_off, a.kv_seq, n0, a.seq_kv);
  load_tile<kBN, D, kThreads>(sV, kLd, a.v + kv_off, a.kv_seq, n0, a.seq_kv);
  async_commit();

  FragC dk[kDcT], dv[kDcT];  // rows = this warp's 16 keys, columns d0 + 16*dt ..
#pragma unroll
  for (int dt = 0; dt < kDcT; ++dt) zero(dk[dt]), zero(dv[dt]);

  // Causal: only queries i >= n0 see these keys.
  const int m_begin = a.causal ? n0 / kBM : 0, m_end = (a.seq_q + kBM - 1) / kBM;
  for (int hq = 0; hq < a.group; ++hq) {
    const int h = hk * a.group + hq;
    const int64_t q_off = b * a.q_batch + h * a.q_head;
    const int64_t row_base = (static_cast<int64_t>(b) * a.heads + h) * a.seq_q;  // lse/delta/dq_acc rows
    for (int m_block = m_begin; m_block < m_end; ++m_block) {
      const int m0 = m_block * kBM;
      __syncthreads();  // previous step finished with sQ, sdO, sdS, sLse, sDelta
      load_tile<kBM, D, kThreads>(sQ, kLd, a.q + q_off, a.q_seq, m0, a.seq_q);
      load_tile<kBM, D, kThreads>(sdO, kLd, a.d_o + q_off, a.q_seq, m0, a.seq_q);
      async_commit();
      for (int i = static_cast<int>(threadIdx.x); i < kBM; i += kThreads) {
        const bool ok = m0 + i < a.seq_q;
        sLse[i] = ok ? a.lse[row_base + m0 + i] : INFINITY;
        sDelta[i] = ok ? a.delta[row_base + m0 + i] : 0.f;
      }
      async_wait_all();
      __syncthreads();

      // S^T = K Q^T: this warp's 16 keys x kBM queries.
      FragC st[kMT];
      rows_times_tiles_t<kBf16, kMT, kDT>(st, sK + 16 * warp * kLd, sQ, kLd);
      // P^T = exp(scale * s - lse), zero where masked or out of range.
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int e = 0; e < kAccElems; ++e) {
          const int key = wkv0 + acc_row(e), qi = 16 * mt + acc_col(e), qrow = m0 + qi;
          const float p = exp2f(fmaf(st[mt].v[e], a.scale_log2, -sLse[qi] * kLog2e));
          st[mt].v[e] = (qrow >= a.seq_q || key >= a.seq_kv || (a.causal && key > qrow)) ? 0.f : p;
        }
      // dV += P^T dO (columns d0..d0+kDc).
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        FragA pa;
        acc_to_a<kBf16>(pa, st[mt]);
#pragma unroll
        for (int dt = 0; dt < kDcT; ++dt) {
          FragB ob;
          load_b_kn(ob, sdO + 16 * mt * kLd + d0 + 16 * dt, kLd);
          mma<kBf16>(dv[dt], pa, ob);
        }
      }
      // dP^T = V dO^T (full head_dim reduction).
      FragC ds[kMT];
      rows_times_tiles_t<kBf16, kMT, kDT>(ds, sV + 16 * warp * kLd, sdO, kLd);
      // dS^T = P^T (dP^T - Delta): gradient w.r.t. x = scale * s; scale is applied at the end.
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int e = 0; e < kAccElems; ++e) ds[mt].v[e] = st[mt].v[e] * (ds[mt].v[e] - sDelta[16 * mt + acc_col(e)]);
      // dK += dS^T Q, and stage dS (dtype) as [query][key] for the dQ product.
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        FragA da;
        acc_to_a<kBf16>(da, ds[mt]);
#pragma unroll
        for (int dt = 0; dt < kDcT; ++dt) {
          FragB qb;
          load_b_kn(qb, sQ + 16 * mt * kLd + d0 + 16 * dt, kLd);
          mma<kBf16>(dk[dt], da, qb);
        }
#pragma unroll
        for (int e = 0; e < kAccElems; ++e)
          sdS[(16 * mt + acc_col(e)) * kLdS + 16 * warp + acc_row(e)] = float_to_bits<kBf16>(ds[mt].v[e]);
      }
      __syncthreads();  // all warps' dS columns staged
      // dQ[m0.., d0..] += dS K over this block's kBN keys: 16x16 output tiles round-robin over warps.
      for (int t = warp; t < kMT * kDcT; t += kWarps) {
        const int mt = t / kDcT, dt = t % kDcT;
        FragC acc;
        zero(acc);
#pragma unroll
        for (int kt = 0; kt < kNT; ++kt) {
          FragA sa;
          FragB kb;
          load_a(sa, sdS + 16 * mt * kLdS + 16 * kt, kLdS);
          load_b_kn(kb, sK + 16 * kt * kLd + d0 + 16 * dt, kLd);
          mma<kBf16>(acc, sa, kb);
        }
#pragma unroll
        for (int e = 0; e < kAccElems; ++e) {
          const int qrow = m0 + 16 * mt + acc_row(e);
          if (qrow < a.seq_q) atomicAdd(a.dq_acc + (row_base + qrow) * D + d0 + 16 * dt + acc_col(e), acc.v[e]);
        }
      }
    }
  }
  async_wait_all();  // nothing pending unless the loops were empty (causal keys past seq_q)

  // dK = scale * sum dS^T Q, dV = sum P^T dO; keys past seq_kv are not written.
  uint16_t* dk_out = a.dk + kv_off;
  uint16_t* dv_out = a.dv + kv_off;
#pragma unroll
  for (int dt = 0; dt < kDcT; ++dt)
#pragma unroll
    for (int e = 0; e < kAccElems; ++e) {
      const int key = wkv0 + acc_row(e);
      if (key < a.seq_kv) {
        const int64_t idx = key * a.kv_seq + d0 + 16 * dt + acc_col(e);
        dk_out[idx] = float_to_bits<kBf16>(dk[dt].v[e] * a.scale);
        dv_out[idx] = float_to_bits<kBf16>(dv[dt].v[e]);
      }
    }
}

// dQ = scale * dq_acc, fp32 [batch][heads][seq_q][D] -> dtype in the layout's strides.
template <bool kBf16>
__global__ void __launch_bounds__(256) flash_bwd_dq_convert_kernel(const float* dq_acc, uint16_t* dq, int head_dim,
                                                                   int heads, int seq_q, int64_t total, int64_t s_batch,
                                                                   int64_t s_head, int64_t s_seq, float scale) {
  for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = idx % head_dim, row = idx / head_dim;
    const int64_t i = row % seq_q, bh = row / seq_q, h = bh % heads, b = bh / heads;
    dq[b * s_batch + h * s_head + i * s_seq + d] = float_to_bits<kBf16>(dq_acc[idx] * scale);
  }
}

// ------------------------------------------------------------------------------ host
inline size_t align256(size_t n) { return (n + 255) / 256 * 256; }

// Kernels above 48 KiB of dynamic smem need a per-device opt-in on CUDA; done once per
// device and kernel (one bit per device id < 64, every call beyond that).
template <class Kernel>
void ensure_smem(Kernel kernel, size_t bytes, std::atomic<uint64_t>& done) {
  if (!kSmemOptIn || bytes <= 48 * 1024) return;
  int dev = 0;
  GPU_CHECK(gpuGetDevice(&dev));
  const uint64_t bit = dev < 64 ? (uint64_t{1} << dev) : 0;
  if (bit != 0 && (done.load(std::memory_order_relaxed) & bit)) return;
  GPU_CHECK(gpuFuncSetAttribute(kernel, gpuFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  done.fetch_or(bit, std::memory_order_relaxed);
}

// Calls f(integral_constant<int, D>, bool_constant<bf16>) for the problem's head_dim/dtype.
template <class F>
void dispatch(const AttentionParams& p, F&& f) {
  const bool bf16 = p.dtype == AttnDtype::bf16;
  auto with_dtype = [&](auto d) {
    if (bf16) f(d, std::true_type{});
    else f(d, std::false_type{});
  };
  switch (p.head_dim) {
    case 64: return with_dtype(std::integral_constant<int, 64>{});
    case 128: return with_dtype(std::integral_constant<int, 128>{});
    case 256: return with_dtype(std::integral_constant<int, 256>{});
    default: throw std::invalid_argument("flash: head_dim must be 64, 128 or 256");
  }
}

inline void check_aligned(const void* ptr, const char* name) {
  if (reinterpret_cast<uintptr_t>(ptr) % 16 != 0)
    throw std::invalid_argument(std::string("flash: tensor ") + name + " must be 16-byte aligned");
}

}  // namespace flash_detail

void flash_check_supported(const AttentionParams& p) {
  using std::invalid_argument;
  using std::to_string;
  if (p.dtype != AttnDtype::fp16 && p.dtype != AttnDtype::bf16)
    throw invalid_argument("flash: dtype must be fp16 or bf16");
  if (p.head_dim != 64 && p.head_dim != 128 && p.head_dim != 256)
    throw invalid_argument("flash: head_dim must be 64, 128 or 256 (got " + to_string(p.head_dim) + ")");
  if (p.batch < 1 || p.heads < 1 || p.kv_heads < 1 || p.seq_q < 1 || p.seq_kv < 1)
    throw invalid_argument("flash: batch, heads, kv_heads, seq_q and seq_kv must be >= 1");
  if (p.heads % p.kv_heads != 0)
    throw invalid_argument("flash: heads (" + to_string(p.heads) + ") must be a multiple of kv_heads (" +
                           to_string(p.kv_heads) + ")");
  if (p.batch > 65535 || p.heads > 65535)  // grid y/z limits
    throw invalid_argument("flash: batch and heads must be <= 65535");
  if (p.seq_q > INT_MAX / 2 || p.seq_kv > INT_MAX / 2)  // int row indices in the kernels
    throw invalid_argument("flash: seq_q and seq_kv must be < 2^30");
  const float scale = p.softmax_scale();
  if (!(scale > 0.f) || !std::isfinite(scale)) throw invalid_argument("flash: softmax scale must be finite and > 0");
}

size_t flash_fwd_workspace_bytes(const AttentionParams& /*p*/) { return 0; }

size_t flash_bwd_workspace_bytes(const AttentionParams& p) {
  // fp32 dQ accumulator [batch][heads][seq_q][head_dim], then fp32 Delta [batch][heads][seq_q].
  return flash_detail::align256(static_cast<size_t>(p.q_elems()) * sizeof(float)) +
         flash_detail::align256(static_cast<size_t>(p.lse_elems()) * sizeof(float));
}

void flash_forward(const AttentionParams& p, const void* q, const void* k, const void* v, void* o, float* lse,
                   void* /*workspace*/, void* stream) {
  using namespace flash_detail;
  flash_check_supported(p);
  check_aligned(q, "q"), check_aligned(k, "k"), check_aligned(v, "v"), check_aligned(o, "o");
  const auto sq = p.strides(p.heads, p.seq_q);
  const auto skv = p.strides(p.kv_heads, p.seq_kv);
  const float scale = p.softmax_scale();
  const FwdArgs args{static_cast<const uint16_t*>(q), static_cast<const uint16_t*>(k),
                     static_cast<const uint16_t*>(v), static_cast<uint16_t*>(o), lse,
                     sq.batch, sq.head, sq.seq, skv.batch, skv.head, skv.seq,
                     static_cast<int>(p.heads), static_cast<int>(p.heads / p.kv_heads),
                     static_cast<int>(p.seq_q), static_cast<int>(p.seq_kv), scale * kLog2e, scale, p.causal};
  dispatch(p, [&](auto d, auto bf16) {
    constexpr int D = decltype(d)::value;
    using Cfg = FwdCfg<D>;
    auto kernel = flash_fwd_kernel<D, decltype(bf16)::value>;
    static std::atomic<uint64_t> smem_done{0};
    ensure_smem(kernel, Cfg::kSmemBytes, smem_done);
    const dim3 grid(static_cast<unsigned>((p.seq_q + Cfg::kBlockM - 1) / Cfg::kBlockM),
                    static_cast<unsigned>(p.heads), static_cast<unsigned>(p.batch));
    kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, static_cast<gpuStream_t>(stream)>>>(args);
    GPU_CHECK_LAUNCH();
  });
}

void flash_backward(const AttentionParams& p, const void* q, const void* k, const void* v, const void* o,
                    const void* d_o, const float* lse, void* dq, void* dk, void* dv, void* workspace, void* stream) {
  using namespace flash_detail;
  flash_check_supported(p);
  check_aligned(q, "q"), check_aligned(k, "k"), check_aligned(v, "v"), check_aligned(d_o, "d_o");
  check_aligned(workspace, "workspace");
  const auto sq = p.strides(p.heads, p.seq_q);
  const auto skv = p.strides(p.kv_heads, p.seq_kv);
  const float scale = p.softmax_scale();
  const gpuStream_t st = static_cast<gpuStream_t>(stream);
  float* dq_acc = static_cast<float*>(workspace);
  float* delta = reinterpret_cast<float*>(static_cast<char*>(workspace) +
                                          align256(static_cast<size_t>(p.q_elems()) * sizeof(float)));
  GPU_CHECK(gpuMemsetAsync(dq_acc, 0, static_cast<size_t>(p.q_elems()) * sizeof(float), st));
  const BwdArgs args{static_cast<const uint16_t*>(q), static_cast<const uint16_t*>(k),
                     static_cast<const uint16_t*>(v), static_cast<const uint16_t*>(d_o), lse, delta, dq_acc,
                     static_cast<uint16_t*>(dk), static_cast<uint16_t*>(dv),
                     sq.batch, sq.head, sq.seq, skv.batch, skv.head, skv.seq,
                     static_cast<int>(p.heads), static_cast<int>(p.heads / p.kv_heads),
                     static_cast<int>(p.seq_q), static_cast<int>(p.seq_kv), scale * kLog2e, scale, p.causal};
  dispatch(p, [&](auto d, auto bf16) {
    constexpr int D = decltype(d)::value;
    constexpr bool kBf16 = decltype(bf16)::value;
    using Cfg = BwdCfg<D>;
    const int64_t rows = p.lse_elems();
    flash_bwd_delta_kernel<D, kBf16><<<static_cast<unsigned>((rows + 7) / 8), 256, 0, st>>>(
        static_cast<const uint16_t*>(o), static_cast<const uint16_t*>(d_o), delta, sq.batch, sq.head, sq.seq,
        static_cast<int>(p.heads), static_cast<int>(p.seq_q), rows);
    GPU_CHECK_LAUNCH();

    auto kernel = flash_bwd_kernel<D, kBf16>;
    static std::atomic<uint64_t> smem_done{0};
    ensure_smem(kernel, Cfg::kSmemBytes, smem_done);
    const dim3 grid(static_cast<unsigned>((p.seq_kv + Cfg::kBlockN - 1) / Cfg::kBlockN),
                    static_cast<unsigned>(p.kv_heads * Cfg::kSplit), static_cast<unsigned>(p.batch));
    kernel<<<grid, Cfg::kThreads, Cfg::kSmemBytes, st>>>(args);
    GPU_CHECK_LAUNCH();

    const int64_t total = p.q_elems();
    const int64_t blocks = (total + 255) / 256;
    flash_bwd_dq_convert_kernel<kBf16><<<static_cast<unsigned>(blocks < (1 << 20) ? blocks : (1 << 20)), 256, 0, st>>>(
        dq_acc, static_cast<uint16_t*>(dq), static_cast<int>(p.head_dim), static_cast<int>(p.heads),
        static_cast<int>(p.seq_q), total, sq.batch, sq.head, sq.seq, scale);
    GPU_CHECK_LAUNCH();
  });
}

}  // namespace gpucal::attention::GPUCAL_GPU_NS
