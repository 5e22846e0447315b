#include "core/formulas/attention_flops.h"

#include <algorithm>

#include "core/errors.h"

namespace gpucal::attention {

std::string to_string(FlopConvention c) { return c == FlopConvention::fa2 ? "fa2" : "fa3"; }

std::string to_string(AttnPass p) {
  switch (p) {
    case AttnPass::fwd: return "fwd";
    case AttnPass::bwd: return "bwd";
    default: return "fwdbwd";
  }
}

FlopConvention parse_flop_convention(const std::string& name) {
  if (name == "fa2") return FlopConvention::fa2;
  if (name == "fa3") return FlopConvention::fa3;
  throw UsageError("--flop-convention: expected fa2 or fa3, got '" + name + "'");
}

AttnPass parse_pass(const std::string& name) {
  if (name == "fwd") return AttnPass::fwd;
  if (name == "bwd") return AttnPass::bwd;
  if (name == "fwdbwd") return AttnPass::fwdbwd;
  throw UsageError("--pass: expected fwd, bwd or fwdbwd, got '" + name + "'");
}

double attention_forward_flops(const FlopShape& s, FlopConvention c) {
  const double bh = static_cast<double>(s.batch) * static_cast<double>(s.heads);
  const double d = static_cast<double>(s.head_dim), sq = static_cast<double>(s.seq_q),
               skv = static_cast<double>(s.seq_kv);
  if (c == FlopConvention::fa3) {
    // 2·b·h·s_q·avg_s_k·(d + d_v), d_v = d.
    const double avg_sk = s.causal ? (std::max(0.0, skv - sq) + skv) / 2 : skv;
    return 2 * bh * sq * avg_sk * (d + d);
  }
  double area = sq * skv;
  if (s.causal) area = sq <= skv ? sq * sq / 2 : skv * skv / 2 + (sq - skv) * skv;
  return 4 * bh * d * area;
}

double pass_flop_factor(AttnPass pass) {
  switch (pass) {
    case AttnPass::fwd: return 1.0;
    case AttnPass::bwd: return 2.5;
    default: return 3.5;
  }
}

double attention_flops(const FlopShape& s, AttnPass pass, FlopConvention c) {
  return attention_forward_flops(s, c) * pass_flop_factor(pass);
}

double causal_visible_pairs(int64_t seq_q, int64_t seq_kv) {
  const double n = static_cast<double>(std::min(seq_q, seq_kv));
  return n * (n + 1) / 2 + static_cast<double>(std::max<int64_t>(0, seq_q - seq_kv)) * static_cast<double>(seq_kv);
}

}  // namespace gpucal::attention
