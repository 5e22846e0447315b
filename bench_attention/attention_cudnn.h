// cuDNN 9 fused scaled-dot-product attention (flash attention), forward and backward, built on
// the backend graph API (no cudnn-frontend). The graphs are the ones cudnn-frontend's SDPA nodes
// lower to, so the backend matches them to its fused attention engines.
// Supported: fp16/bf16 I/O (fp32 softmax and accumulation), BSHD/BHSD layouts, MHA/GQA/MQA,
// top-left causal mask, seq_q != seq_kv. Unsupported shapes raise CudnnUnsupported (a skip).
#pragma once

#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <memory>
#include <string>

#include "bench_attention/attention_params.h"
#include "core/backend/cudnn_graph.h"  // CUDNN_CHECK, CudnnError, CudnnUnsupported

namespace gpucal::attention {

class CudnnSdpa {
 public:
  enum class Pass { fwd, bwd };

  // Builds the pass's operation graph, asks heuristics (mode A, then FALLBACK) for engine
  // configs, finalizes the first plan that builds and sizes its workspace. Call outside any timed
  // region. Throws CudnnUnsupported with a one-line reason when no engine supports the
  // configuration, std::runtime_error (CudnnError for cuDNN failures) otherwise.
  CudnnSdpa(cudnnHandle_t handle, const AttentionParams& p, Pass pass);
  ~CudnnSdpa();
  CudnnSdpa(CudnnSdpa&&) noexcept;
  CudnnSdpa& operator=(CudnnSdpa&&) noexcept;
  CudnnSdpa(const CudnnSdpa&) = delete;
  CudnnSdpa& operator=(const CudnnSdpa&) = delete;

  double build_ms() const;         // wall time spent building graph and plan
  size_t workspace_bytes() const;  // device bytes forward()/backward() need at `workspace` (256-byte aligned)
  std::string engine_description() const;  // "engine=N knobs=type:value,... heur=A cfg=i/n"

  // O has Q's layout and dtype. lse: softmax log-sum-exp, fp32 [batch][heads][seq_q], always written.
  // Valid only for Pass::fwd. Pointers must be 16-byte aligned.
  void forward(const void* q, const void* k, const void* v, void* o, float* lse, void* workspace,
               cudaStream_t stream) const;
  // From Q, K, V, O, dO and the forward's lse, writes dQ (Q's shape) and dK, dV (kv_heads heads,
  // K/V's layout). Valid only for Pass::bwd.
  void backward(const void* q, const void* k, const void* v, const void* o, const void* d_o, const float* lse,
                void* dq, void* dk, void* dv, void* workspace, cudaStream_t stream) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "9.x.y (backend 9xxyy)" from cudnnGetVersion(); notes the headers' version when it differs.
std::string cudnn_version_string();

// True on sm_90+ with cuDNN >= 9.1, where cuDNN has fp8 SDPA engines. This wrapper does not build
// fp8 graphs yet: CudnnSdpa throws CudnnUnsupported("fp8 SDPA not implemented") for fp8_e4m3.
bool cudnn_sdpa_fp8_available(int cc_major, int cc_minor);

}  // namespace gpucal::attention
