// gpucal's portable fused attention ("flash"), FlashAttention-2 style, written once for
// CUDA and HIP. The vendor differences (tensor-core MMA, fragment layouts, async copies)
// live in flash_mma.h; everything else is shared: flash_tiles.cuh (tile shapes, arguments,
// tile copies), flash_fwd.cuh and flash_bwd.cuh (the kernels), and the host side here.
// Included by exactly one translation unit per vendor (flash_attention_cuda.cu,
// flash_attention_hip.hip).
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
#include "bench_attention/flash_bwd.cuh"
#include "bench_attention/flash_fwd.cuh"
#include "bench_attention/flash_tiles.cuh"
#include "core/backend/gpu_runtime.h"

namespace gpucal::attention::GPUCAL_GPU_NS {
namespace flash_detail {

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
