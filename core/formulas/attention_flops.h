// Attention FLOP counting, in one place. Two published conventions, recorded per row in the
// `flop_convention` column:
//   fa2 (default, FlashAttention-2 benchmark scripts): forward = 4·b·h·d·(unmasked area of the
//       s_q × s_kv score matrix): two matmuls (S = QKᵀ and O = PV) of 2·d flop per score. The
//       area is s_q·s_kv without a mask; with the top-left causal mask (query i sees keys j ≤ i)
//       it is the continuous area under the diagonal j = i:
//           s_q ≤ s_kv: s_q²/2        s_q > s_kv: s_kv²/2 + (s_q − s_kv)·s_kv
//       which is exactly the FA2 script's "halved for causal" when s_q = s_kv. (The discrete
//       count of visible pairs, causal_visible_pairs(), is larger by about min(s_q, s_kv)/2:
//       the diagonal; the convention deliberately does not count it, like FA2.)
//   fa3 (FlashAttention-3 paper): 2·b·h·s_q·avg_s_k·(d + d_v), avg_s_k = s_kv without a mask and
//       (max(0, s_kv − s_q) + s_kv)/2 with one. FA3 aligns the causal mask bottom-right, so for
//       s_q ≠ s_kv this is a convention, not the work our top-left mask does.
// Backward = 2.5 × forward (5 matmuls instead of 2), forward+backward = 3.5 × forward, in both.
#pragma once

#include <cstdint>
#include <string>

namespace gpucal::attention {

enum class FlopConvention { fa2, fa3 };
enum class AttnPass { fwd, bwd, fwdbwd };

std::string to_string(FlopConvention c);
std::string to_string(AttnPass p);
// Throw UsageError naming the accepted values.
FlopConvention parse_flop_convention(const std::string& name);
AttnPass parse_pass(const std::string& name);

struct FlopShape {
  int64_t batch = 1, heads = 1, seq_q = 1, seq_kv = 1, head_dim = 1;
  bool causal = false;
};

// Forward-pass flops under the convention.
double attention_forward_flops(const FlopShape& s, FlopConvention c);
// Multiple of the forward count a pass costs: 1, 2.5, 3.5.
double pass_flop_factor(AttnPass pass);
double attention_flops(const FlopShape& s, AttnPass pass, FlopConvention c);
// Exact number of (query, key) pairs the top-left causal mask leaves visible: Σ_i min(i+1, s_kv).
double causal_visible_pairs(int64_t seq_q, int64_t seq_kv);

}  // namespace gpucal::attention
