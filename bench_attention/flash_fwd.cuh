// The flash forward kernel (flash_kernels.cuh): one block = kBlockM query rows of one
// (batch, head), looping over K/V blocks of kBlockN keys with an fp32 online softmax.
// A step's phases are force-inlined helpers in the kernel's order, but for P V (see there).
#pragma once

#include <cmath>
#include <cstdint>

#include "bench_attention/flash_tiles.cuh"

namespace gpucal::attention::GPUCAL_GPU_NS {
namespace flash_detail {

// Keys past seq_kv (ragged last block) and, causally, keys after the query row: -inf.
template <int D>
__device__ __forceinline__ void mask_scores(FragC (&s)[FwdCfg<D>::kBlockN / 16], int n0, int wrow0, int seq_kv,
                                            bool causal) {
  constexpr int kNT = FwdCfg<D>::kBlockN / 16;
#pragma unroll
  for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
    for (int e = 0; e < kAccElems; ++e) {
      const int col = n0 + 16 * nt + acc_col(e), row = wrow0 + acc_row(e);
      if (col >= seq_kv || (causal && col > row)) s[nt].v[e] = -INFINITY;
    }
}

// Online softmax: new row max, rescale l and O by exp(scale * (m_old - m_new)); s becomes
// P = exp(scale * s - scale * m_new), summed into l lane-partially (reduced once at the end).
template <int D>
__device__ __forceinline__ void online_softmax(FragC (&s)[FwdCfg<D>::kBlockN / 16], FragC (&o)[D / 16],
                                               float (&m_run)[kAccRows], float (&l_run)[kAccRows],
                                               float scale_log2) {
  constexpr int kNT = FwdCfg<D>::kBlockN / 16, kDT = D / 16;
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
    corr[r] = exp2f((m_run[r] - m_use) * scale_log2);            // 0 when m_run = -inf
    m_base[r] = m_use * scale_log2;
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
      const float p = exp2f(fmaf(s[nt].v[e], scale_log2, -m_base[acc_slot(e)]));
      s[nt].v[e] = p;
      l_run[acc_slot(e)] += p;  // lane-partial; reduced across lanes once at the end
    }
}

// Epilogue per warp: lse = scale * m + log(l) for its rows, and O / l (dtype) into its 16 rows
// of sQ. Only this warp ever read those rows of sQ, and the loop's last barrier ordered those
// reads before these writes.
template <int D, bool kBf16>
__device__ __forceinline__ void finish_rows(uint16_t* sQ, const FragC (&o)[D / 16], const float (&m_run)[kAccRows],
                                            const float (&l_run)[kAccRows], int warp, int wrow0, int seq_q, float* lse,
                                            int b, int heads, int h, float scale) {
  constexpr int kDT = D / 16, kLd = FwdCfg<D>::kLd;
  float inv_l[kAccRows];
#pragma unroll
  for (int r = 0; r < kAccRows; ++r) {
    const float l = row_sum(l_run[r]);
    inv_l[r] = l > 0.f ? 1.f / l : 0.f;
    const int row = wrow0 + slot_row(r);
    if (row_leader() && row < seq_q)
      lse[(static_cast<int64_t>(b) * heads + h) * seq_q + row] = l > 0.f ? m_run[r] * scale + logf(l) : INFINITY;
  }
#pragma unroll
  for (int dt = 0; dt < kDT; ++dt)
#pragma unroll
    for (int e = 0; e < kAccElems; ++e)
      sQ[(16 * warp + acc_row(e)) * kLd + 16 * dt + acc_col(e)] = float_to_bits<kBf16>(o[dt].v[e] * inv_l[acc_slot(e)]);
}

// The block's O tile from shared memory to its rows in global memory, 16 bytes at a time.
template <int D>
__device__ __forceinline__ void store_o_tile(uint16_t* out, const uint16_t* sQ, int m0, int seq_q, int64_t q_seq) {
  constexpr int kBM = FwdCfg<D>::kBlockM, kLd = FwdCfg<D>::kLd, kThreads = FwdCfg<D>::kThreads;
  for (int c = static_cast<int>(threadIdx.x); c < kBM * (D / 8); c += kThreads) {
    const int r = c / (D / 8), col = (c % (D / 8)) * 8;
    if (m0 + r < seq_q)
      *reinterpret_cast<uint4*>(out + (m0 + r) * q_seq + col) = *reinterpret_cast<const uint4*>(sQ + r * kLd + col);
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
    // Only the ragged last block and, causally, blocks reaching past the warp's first row.
    if (n0 + kBN > a.seq_kv || (a.causal && n0 + kBN - 1 > wrow0)) mask_scores<D>(s, n0, wrow0, a.seq_kv, a.causal);
    online_softmax<D>(s, o, m_run, l_run, a.scale_log2);

    v_copy.land();
    async_wait_all();
    __syncthreads();  // V_nb visible; every warp finished reading K_nb
    if (nb + 1 < n_blocks) k_copy.issue(sK, kLd, k, a.kv_seq, n0 + kBN, a.seq_kv);
    async_commit();

    // O += P V: P's accumulator tile kt is the A operand for keys 16kt..16kt+15 (in the kernel's
    // body: through a helper, hipcc allocates this kernel's registers differently).
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

  // Epilogue: O /= l, lse = scale * m + log(l).
  finish_rows<D, kBf16>(sQ, o, m_run, l_run, warp, wrow0, a.seq_q, a.lse, b, a.heads, h, a.scale);
  __syncthreads();
  store_o_tile<D>(a.o + b * a.q_batch + h * a.q_head, sQ, m0, a.seq_q, a.q_seq);
}

}  // namespace flash_detail
}  // namespace gpucal::attention::GPUCAL_GPU_NS
