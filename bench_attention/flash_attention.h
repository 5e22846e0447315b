// Host API of gpucal's own portable fused attention kernel ("flash"): FlashAttention-2
// style forward and backward, written once in flash_kernels.cuh and compiled for CUDA
// (flash_attention_cuda.cu) and HIP (flash_attention_hip.hip). Both builds may be linked
// into one binary, so each lives in its vendor namespace; this header declares both and
// exposes no vendor types (the stream is a void* holding a cudaStream_t / hipStream_t).
//
// Tensors are device pointers in p.dtype (fp16 or bf16) laid out as p.layout with the
// strides AttentionParams::strides() gives (Q, O, dO, dQ: p.heads; K, V, dK, dV:
// p.kv_heads); every tensor pointer must be 16-byte aligned. lse is fp32
// [batch][heads][seq_q], the natural-log logsumexp of the scaled scores of each query row.
// Workspace: at least flash_*_workspace_bytes(p) bytes of device memory, 256-byte aligned,
// owned by the caller (allocate it outside the timed region). Calls are asynchronous on
// `stream`; launch errors throw std::runtime_error through GPU_CHECK_LAUNCH.
#pragma once

#include <cstddef>

#include "bench_attention/attention_params.h"

#define GPUCAL_FLASH_ATTENTION_API                                                          \
  /* Throws std::invalid_argument with a one-line reason for unsupported problems         \
     (head_dim not 64/128/256, fp32/fp8, heads % kv_heads != 0, empty shapes). */          \
  void flash_check_supported(const AttentionParams& p);                                    \
  size_t flash_fwd_workspace_bytes(const AttentionParams& p);                              \
  size_t flash_bwd_workspace_bytes(const AttentionParams& p);                              \
  /* O = softmax(scale * Q K^T [+ causal mask]) V; also writes lse. */                     \
  void flash_forward(const AttentionParams& p, const void* q, const void* k, const void* v, \
                     void* o, float* lse, void* workspace, void* stream);                  \
  /* dQ, dK, dV from Q, K, V, the forward's O and lse, and dO. */                          \
  void flash_backward(const AttentionParams& p, const void* q, const void* k, const void* v, \
                      const void* o, const void* d_o, const float* lse, void* dq, void* dk, \
                      void* dv, void* workspace, void* stream);

namespace gpucal::attention::cuda {
GPUCAL_FLASH_ATTENTION_API
}  // namespace gpucal::attention::cuda

namespace gpucal::attention::hip {
GPUCAL_FLASH_ATTENTION_API
}  // namespace gpucal::attention::hip

#undef GPUCAL_FLASH_ATTENTION_API
