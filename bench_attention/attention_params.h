// Shape and layout of one attention problem, shared by every implementation
// (host reference, cuDNN SDPA, the portable flash kernel). Plain data, no vendor types.
#pragma once
#include <cmath>
#include <cstdint>

namespace gpucal::attention {

enum class AttnDtype { fp16, bf16, fp32, fp8_e4m3 };
// BSHD: [batch][seq][heads][head_dim]; BHSD: [batch][heads][seq][head_dim].
enum class AttnLayout { BSHD, BHSD };

struct AttentionParams {
  int64_t batch = 1;
  int64_t heads = 1;     // query heads
  int64_t kv_heads = 1;  // heads of K and V; heads % kv_heads == 0 (MHA, GQA, MQA)
  int64_t seq_q = 1;
  int64_t seq_kv = 1;
  int64_t head_dim = 64;
  bool causal = false;  // top-left aligned: query row i sees keys j <= i
  float scale = 0.f;    // softmax scale; 0 means 1/sqrt(head_dim)
  AttnDtype dtype = AttnDtype::bf16;
  AttnLayout layout = AttnLayout::BSHD;

  float softmax_scale() const;  // defined inline below
  // Element strides of Q/O (heads) and K/V (kv_heads) tensors for the layout.
  struct Strides { int64_t batch, head, seq, dim; };
  Strides strides(int64_t nheads, int64_t seq) const {
    if (layout == AttnLayout::BSHD) return {seq * nheads * head_dim, head_dim, nheads * head_dim, 1};
    return {nheads * seq * head_dim, seq * head_dim, head_dim, 1};
  }
  int64_t q_elems() const { return batch * heads * seq_q * head_dim; }
  int64_t kv_elems() const { return batch * kv_heads * seq_kv * head_dim; }
  // Softmax statistics (logsumexp, fp32) saved by forward for backward: [batch][heads][seq_q].
  int64_t lse_elems() const { return batch * heads * seq_q; }
};

inline float AttentionParams::softmax_scale() const {
  return scale != 0.f ? scale : 1.f / std::sqrt(static_cast<float>(head_dim));
}

}  // namespace gpucal::attention
