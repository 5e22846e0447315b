#include "bench_attention/attention_problem.h"

#include <cmath>

#include "core/errors.h"

namespace gpucal::attention {

std::string to_string(AttnLayout layout) { return layout == AttnLayout::BSHD ? "BSHD" : "BHSD"; }

std::optional<AttnDtype> attn_dtype(DType t) {
  switch (t) {
    case DType::fp16: return AttnDtype::fp16;
    case DType::bf16: return AttnDtype::bf16;
    case DType::fp8_e4m3: return AttnDtype::fp8_e4m3;
    case DType::fp32: return AttnDtype::fp32;
    default: return std::nullopt;
  }
}

double AttentionProblem::flops() const {
  const FlopShape s{shape.batch, shape.heads, shape.seq_q, shape.seq_kv, shape.head_dim, shape.causal};
  return attention_flops(s, pass, convention);
}

std::string AttentionProblem::point(const std::string& impl, const std::string& regime) const {
  const auto& s = shape;
  return "attention/" + impl + "/" + gpucal::to_string(dtype) + "/" + attention::to_string(pass) + "/" +
         to_string(s.layout) + "/b" + std::to_string(s.batch) + "/h" + std::to_string(s.heads) + "/kv" +
         std::to_string(s.kv_heads) + "/sq" + std::to_string(s.seq_q) + "/skv" + std::to_string(s.seq_kv) + "/d" +
         std::to_string(s.head_dim) + "/causal" + (s.causal ? "1" : "0") + "/" + regime;
}

void AttentionProblem::describe(Row& row) const {
  row.set("dtype", gpucal::to_string(dtype))
      .set("layout", to_string(shape.layout))
      .set("pass", attention::to_string(pass))
      .set("batch", shape.batch)
      .set("heads", shape.heads)
      .set("kv_heads", shape.kv_heads)
      .set("seq_q", shape.seq_q)
      .set("seq_kv", shape.seq_kv)
      .set("head_dim", shape.head_dim)
      .set("causal", shape.causal)
      .set("flop_convention", attention::to_string(convention))
      .set("flops", flops());
}

double AttentionProblem::tensor_bytes() const {
  // In doubles: the element counts of a huge shape overflow 64-bit integers.
  const double e = static_cast<double>(dtype_bytes(dtype));
  const double b = static_cast<double>(shape.batch), d = static_cast<double>(shape.head_dim);
  const double q = b * static_cast<double>(shape.heads) * static_cast<double>(shape.seq_q) * d * e;
  const double kv = b * static_cast<double>(shape.kv_heads) * static_cast<double>(shape.seq_kv) * d * e;
  const double lse = b * static_cast<double>(shape.heads) * static_cast<double>(shape.seq_q) * sizeof(float);
  const double fwd = 2 * q + 2 * kv + lse;               // Q O K V LSE
  return needs_backward() ? fwd + 2 * q + 2 * kv : fwd;  // + dO dQ, dK dV
}

AttentionProblem make_problem(DType dtype, AttnPass pass, FlopConvention convention, const std::string& layout,
                              int64_t batch, int64_t heads, int64_t kv_heads, int64_t seq_q, int64_t seq_kv,
                              int64_t head_dim, bool causal) {
  if (batch < 1 || heads < 1 || kv_heads < 1 || seq_q < 1 || seq_kv < 1 || head_dim < 1)
    throw UsageError("attention dimensions (batch, heads, kv-heads, seq, seq-kv, head-dim) must be at least 1");
  if (heads % kv_heads != 0)
    throw UsageError("--heads " + std::to_string(heads) + " is not a multiple of --kv-heads " +
                     std::to_string(kv_heads));
  AttentionProblem p;
  if (layout == "BSHD") p.shape.layout = AttnLayout::BSHD;
  else if (layout == "BHSD") p.shape.layout = AttnLayout::BHSD;
  else throw UsageError("--layout: expected BSHD or BHSD, got '" + layout + "'");
  p.dtype = dtype;
  p.pass = pass;
  p.convention = convention;
  p.shape.batch = batch;
  p.shape.heads = heads;
  p.shape.kv_heads = kv_heads;
  p.shape.seq_q = seq_q;
  p.shape.seq_kv = seq_kv;
  p.shape.head_dim = head_dim;
  p.shape.causal = causal;
  if (auto t = attn_dtype(dtype)) p.shape.dtype = *t;
  return p;
}

Tolerances tolerances(const AttentionProblem& p) {
  // u_out: rounding of the stored result; u_in: P and dS are rounded to the input dtype before
  // their matmuls (FA2 kernels and cuDNN do this for 16-bit inputs); u_acc: fp32 accumulation
  // (fp64 for fp64 data) over reductions of length s_kv (forward), s_q + s_kv (backward) and d.
  const double u_out = dtype_unit_roundoff(p.dtype);
  const double u_in = u_out;
  const double u_acc = dtype_unit_roundoff(p.dtype == DType::fp64 ? DType::fp64 : DType::fp32);
  const double d = static_cast<double>(p.shape.head_dim), sq = static_cast<double>(p.shape.seq_q),
               skv = static_cast<double>(p.shape.seq_kv);
  Tolerances t;
  t.out = 2 * u_out + 4 * u_in + 16 * std::sqrt(skv + d) * u_acc;
  // LSE is stored in fp32 whatever the data type.
  t.lse = 16 * std::sqrt(skv + d) * u_acc + 2 * dtype_unit_roundoff(DType::fp32);
  t.grad = 2 * u_out + 8 * u_in + 16 * std::sqrt(sq + skv + d) * u_acc;
  t.underflow = dtype_underflow(p.dtype);
  return t;
}

}  // namespace gpucal::attention
