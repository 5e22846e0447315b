// The flash backward kernels (flash_kernels.cuh): Delta = rowsum(dO * O) first; then one
// block = kBlockN keys of one (batch, kv head) with K, V in shared memory and dK, dV in
// registers, looping over every query head of the GQA group and every query block; last,
// dQ's fp32 accumulator scaled and converted. The main kernel's phases are force-inlined
// helpers in the kernel's order, but for P^T and dQ's bounds check (see there).
#pragma once

#include <cmath>
#include <cstdint>

#include "bench_attention/flash_tiles.cuh"

namespace gpucal::attention::GPUCAL_GPU_NS {
namespace flash_detail {

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

// The block's shared memory: K, V for the whole run; Q, dO, dS, lse and Delta per query block.
template <int D>
struct BwdSmem {
  uint16_t *sK, *sV, *sQ, *sdO, *sdS;
  float *sLse, *sDelta;
  __device__ __forceinline__ explicit BwdSmem(unsigned char* raw) {
    using Cfg = BwdCfg<D>;
    constexpr int kBN = Cfg::kBlockN, kBM = Cfg::kBlockM, kLd = Cfg::kLd, kLdS = Cfg::kLdS;
    sK = reinterpret_cast<uint16_t*>(raw);  // [kBN][kLd]
    sV = sK + kBN * kLd;                    // [kBN][kLd]
    sQ = sV + kBN * kLd;                    // [kBM][kLd]
    sdO = sQ + kBM * kLd;                   // [kBM][kLd]
    sdS = sdO + kBM * kLd;                  // [kBM][kLdS]: dS as [query][key]
    sLse = reinterpret_cast<float*>(sdS + kBM * kLdS);
    sDelta = sLse + kBM;
  }
};

// Query block m0 of one head into shared memory: Q, dO (the head's slices) and its rows' lse
// and Delta (rows past seq_q: lse +inf, Delta 0), visible to every warp on return.
template <int D>
__device__ __forceinline__ void stage_query_block(const BwdSmem<D>& sm, const uint16_t* q, int64_t q_seq, int m0,
                                                  int seq_q, const uint16_t* d_o, const float* lse,
                                                  const float* delta, int64_t row_base) {
  using Cfg = BwdCfg<D>;
  constexpr int kBM = Cfg::kBlockM, kLd = Cfg::kLd, kThreads = Cfg::kThreads;
  __syncthreads();  // previous step finished with sQ, sdO, sdS, sLse, sDelta
  load_tile<kBM, D, kThreads>(sm.sQ, kLd, q, q_seq, m0, seq_q);
  load_tile<kBM, D, kThreads>(sm.sdO, kLd, d_o, q_seq, m0, seq_q);
  async_commit();
  for (int i = static_cast<int>(threadIdx.x); i < kBM; i += kThreads) {
    const bool ok = m0 + i < seq_q;
    sm.sLse[i] = ok ? lse[row_base + m0 + i] : INFINITY;
    sm.sDelta[i] = ok ? delta[row_base + m0 + i] : 0.f;
  }
  async_wait_all();
  __syncthreads();
}

// acc += A B over this warp's 16 rows, for columns d0.. of the block's kDc: A's tile mt is the
// accumulator a[mt] in registers, B's rows 16 mt.. are in shared memory. dV += P^T dO and
// dK += dS^T Q.
template <int D, bool kBf16>
__device__ __forceinline__ void accumulate_times_rows(FragC (&acc)[BwdCfg<D>::kDc / 16],
                                                      const FragC (&a)[BwdCfg<D>::kBlockM / 16], const uint16_t* rows,
                                                      int d0) {
  constexpr int kMT = BwdCfg<D>::kBlockM / 16, kDcT = BwdCfg<D>::kDc / 16, kLd = BwdCfg<D>::kLd;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
    FragA fa;
    acc_to_a<kBf16>(fa, a[mt]);
#pragma unroll
    for (int dt = 0; dt < kDcT; ++dt) {
      FragB fb;
      load_b_kn(fb, rows + 16 * mt * kLd + d0 + 16 * dt, kLd);
      mma<kBf16>(acc[dt], fa, fb);
    }
  }
}

// dS^T = P^T (dP^T - Delta): the gradient w.r.t. x = scale * s; scale is applied at the end.
template <int D>
__device__ __forceinline__ void scores_gradient_t(FragC (&ds)[BwdCfg<D>::kBlockM / 16],
                                                  const FragC (&st)[BwdCfg<D>::kBlockM / 16], const float* sDelta) {
  constexpr int kMT = BwdCfg<D>::kBlockM / 16;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int e = 0; e < kAccElems; ++e) ds[mt].v[e] = st[mt].v[e] * (ds[mt].v[e] - sDelta[16 * mt + acc_col(e)]);
}

// dK += dS^T Q, and dS (dtype) staged as [query][key] for the dQ product.
template <int D, bool kBf16>
__device__ __forceinline__ void accumulate_dk_stage_ds(FragC (&dk)[BwdCfg<D>::kDc / 16],
                                                       const FragC (&ds)[BwdCfg<D>::kBlockM / 16],
                                                       const BwdSmem<D>& sm, int d0, int warp) {
  constexpr int kMT = BwdCfg<D>::kBlockM / 16, kDcT = BwdCfg<D>::kDc / 16;
  constexpr int kLd = BwdCfg<D>::kLd, kLdS = BwdCfg<D>::kLdS;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
    FragA da;
    acc_to_a<kBf16>(da, ds[mt]);
#pragma unroll
    for (int dt = 0; dt < kDcT; ++dt) {
      FragB qb;
      load_b_kn(qb, sm.sQ + 16 * mt * kLd + d0 + 16 * dt, kLd);
      mma<kBf16>(dk[dt], da, qb);
    }
#pragma unroll
    for (int e = 0; e < kAccElems; ++e)
      sm.sdS[(16 * mt + acc_col(e)) * kLdS + 16 * warp + acc_row(e)] = float_to_bits<kBf16>(ds[mt].v[e]);
  }
}

// One 16x16 tile (mt, dt) of dS K over this block's kBN keys: rows 16 mt.. of the query block,
// columns d0 + 16 dt.. of dQ.
template <int D, bool kBf16>
__device__ __forceinline__ FragC ds_times_k_tile(const BwdSmem<D>& sm, int mt, int dt, int d0) {
  using Cfg = BwdCfg<D>;
  constexpr int kNT = Cfg::kBlockN / 16, kLd = Cfg::kLd, kLdS = Cfg::kLdS;
  FragC acc;
  zero(acc);
#pragma unroll
  for (int kt = 0; kt < kNT; ++kt) {
    FragA sa;
    FragB kb;
    load_a(sa, sm.sdS + 16 * mt * kLdS + 16 * kt, kLdS);
    load_b_kn(kb, sm.sK + 16 * kt * kLd + d0 + 16 * dt, kLd);
    mma<kBf16>(acc, sa, kb);
  }
  return acc;
}

// dK = scale * sum dS^T Q, dV = sum P^T dO; keys past seq_kv are not written.
template <int D, bool kBf16>
__device__ __forceinline__ void store_dk_dv(uint16_t* dk_out, uint16_t* dv_out, const FragC (&dk)[BwdCfg<D>::kDc / 16],
                                            const FragC (&dv)[BwdCfg<D>::kDc / 16], int wkv0, int d0, int seq_kv,
                                            int64_t kv_seq, float scale) {
  constexpr int kDcT = BwdCfg<D>::kDc / 16;
#pragma unroll
  for (int dt = 0; dt < kDcT; ++dt)
#pragma unroll
    for (int e = 0; e < kAccElems; ++e) {
      const int key = wkv0 + acc_row(e);
      if (key < seq_kv) {
        const int64_t idx = key * kv_seq + d0 + 16 * dt + acc_col(e);
        dk_out[idx] = float_to_bits<kBf16>(dk[dt].v[e] * scale);
        dv_out[idx] = float_to_bits<kBf16>(dv[dt].v[e]);
      }
    }
}

template <int D, bool kBf16>
__global__ void __launch_bounds__(BwdCfg<D>::kThreads) flash_bwd_kernel(const BwdArgs a) {
  using Cfg = BwdCfg<D>;
  constexpr int kBN = Cfg::kBlockN, kBM = Cfg::kBlockM, kLd = Cfg::kLd;
  constexpr int kThreads = Cfg::kThreads, kWarps = Cfg::kWarps, kDc = Cfg::kDc;
  constexpr int kMT = kBM / 16, kDT = D / 16, kDcT = kDc / 16;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const BwdSmem<D> sm(smem_raw);

  const int n0 = blockIdx.x * kBN;
  const int hk = blockIdx.y / Cfg::kSplit, d0 = (blockIdx.y % Cfg::kSplit) * kDc;  // kv head, column chunk
  const int b = blockIdx.z;
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
  const int wkv0 = n0 + 16 * warp;  // this warp's first key row
  const int64_t kv_off = b * a.kv_batch + hk * a.kv_head;

  load_tile<kBN, D, kThreads>(sm.sK, kLd, a.k + kv_off, a.kv_seq, n0, a.seq_kv);
  load_tile<kBN, D, kThreads>(sm.sV, kLd, a.v + kv_off, a.kv_seq, n0, a.seq_kv);
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
      stage_query_block<D>(sm, a.q + q_off, a.q_seq, m0, a.seq_q, a.d_o + q_off, a.lse, a.delta, row_base);
      // S^T = K Q^T: this warp's 16 keys x kBM queries.
      FragC st[kMT];
      rows_times_tiles_t<kBf16, kMT, kDT>(st, sm.sK + 16 * warp * kLd, sm.sQ, kLd);
      // P^T = exp(scale * s - lse), zero where masked or out of range. This and the dQ bounds
      // check below stay in the kernel's body: through a helper taking the bounds by value,
      // nvcc allocates this kernel's registers differently (more spills at d = 256).
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int e = 0; e < kAccElems; ++e) {
          const int key = wkv0 + acc_row(e), qi = 16 * mt + acc_col(e), qrow = m0 + qi;
          const float p = exp2f(fmaf(st[mt].v[e], a.scale_log2, -sm.sLse[qi] * kLog2e));
          st[mt].v[e] = (qrow >= a.seq_q || key >= a.seq_kv || (a.causal && key > qrow)) ? 0.f : p;
        }
      accumulate_times_rows<D, kBf16>(dv, st, sm.sdO, d0);  // dV += P^T dO (columns d0..d0+kDc)
      // dP^T = V dO^T (full head_dim reduction), then dS^T.
      FragC ds[kMT];
      rows_times_tiles_t<kBf16, kMT, kDT>(ds, sm.sV + 16 * warp * kLd, sm.sdO, kLd);
      scores_gradient_t<D>(ds, st, sm.sDelta);
      accumulate_dk_stage_ds<D, kBf16>(dk, ds, sm, d0, warp);
      __syncthreads();  // all warps' dS columns staged
      // dQ[m0.., d0..] += dS K: 16x16 output tiles round-robin over warps, added to the fp32
      // accumulator (several key blocks touch each dQ row).
      for (int t = warp; t < kMT * kDcT; t += kWarps) {
        const int mt = t / kDcT, dt = t % kDcT;
        const FragC acc = ds_times_k_tile<D, kBf16>(sm, mt, dt, d0);
#pragma unroll
        for (int e = 0; e < kAccElems; ++e) {
          const int qrow = m0 + 16 * mt + acc_row(e);
          if (qrow < a.seq_q) atomicAdd(a.dq_acc + (row_base + qrow) * D + d0 + 16 * dt + acc_col(e), acc.v[e]);
        }
      }
    }
  }
  async_wait_all();  // nothing pending unless the loops were empty (causal keys past seq_q)
  store_dk_dv<D, kBf16>(a.dk + kv_off, a.dv + kv_off, dk, dv, wkv0, d0, a.seq_kv, a.kv_seq, a.scale);
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

}  // namespace flash_detail
}  // namespace gpucal::attention::GPUCAL_GPU_NS
