#include "bench_attention/attention_reference.h"

#include <algorithm>
#include <cmath>

#include "core/backend/element_convert.h"

namespace gpucal::attention {

void HostTensor::load_row(double* dst, int64_t n, int64_t b, int64_t h, int64_t s) const {
  const int64_t base = b * strides.batch + h * strides.head + s * strides.seq;  // dim stride is 1
  switch (type) {  // one switch per row, not per element
    case DType::fp64: std::copy_n(static_cast<const double*>(data) + base, n, dst); break;
    case DType::fp32:
    case DType::tf32: {
      const float* src = static_cast<const float*>(data) + base;
      for (int64_t d = 0; d < n; ++d) dst[d] = src[d];
      break;
    }
    default:
      for (int64_t d = 0; d < n; ++d)
        dst[d] = elem::load_as_double(data, static_cast<uint64_t>(base + d), static_cast<int>(type));
  }
}

HostTensor q_view(const AttentionParams& p, const void* data, DType t) {
  return {data, t, p.strides(p.heads, p.seq_q)};
}
HostTensor kv_view(const AttentionParams& p, const void* data, DType t) {
  return {data, t, p.strides(p.kv_heads, p.seq_kv)};
}

namespace {
int64_t visible_keys(const AttentionParams& p, int64_t i) {
  return p.causal ? std::min(i + 1, p.seq_kv) : p.seq_kv;
}
}  // namespace

QueryRowResult reference_query_row(const AttentionParams& p, const AttentionInputs& in, int64_t b, int64_t h,
                                   int64_t i, bool with_grad) {
  const int64_t d = p.head_dim, hk = h / (p.heads / p.kv_heads), n = visible_keys(p, i);
  const double scale = p.softmax_scale();
  std::vector<double> q(d), kr(d), vr(d), x(n), xm(n);
  in.q.load_row(q.data(), d, b, h, i);
  QueryRowResult r;
  double m = -INFINITY;
  for (int64_t j = 0; j < n; ++j) {
    in.k.load_row(kr.data(), d, b, hk, j);
    double dot = 0, mag = 0;
    for (int64_t c = 0; c < d; ++c) dot += q[c] * kr[c], mag += std::fabs(q[c] * kr[c]);
    x[j] = scale * dot;
    r.x_abs_max = std::max(r.x_abs_max, scale * mag);
    m = std::max(m, x[j]);
  }
  double l = 0;
  for (int64_t j = 0; j < n; ++j) l += std::exp(x[j] - m);
  r.lse = m + std::log(l);
  r.o.assign(d, 0.0);
  r.o_mag.assign(d, 0.0);
  r.o_floor.assign(d, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - r.lse);  // P_ij from here on
    in.v.load_row(vr.data(), d, b, hk, j);
    for (int64_t c = 0; c < d; ++c)
      r.o[c] += x[j] * vr[c], r.o_mag[c] += x[j] * std::fabs(vr[c]), r.o_floor[c] += std::fabs(vr[c]);
  }
  if (!with_grad) return r;
  std::vector<double> dout(d);
  in.d_o.load_row(dout.data(), d, b, h, i);
  for (int64_t c = 0; c < d; ++c) r.delta += dout[c] * r.o[c], r.delta_mag += std::fabs(dout[c] * r.o[c]);
  r.dq.assign(d, 0.0);
  r.dq_mag.assign(d, 0.0);
  r.dq_floor.assign(d, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    in.v.load_row(vr.data(), d, b, hk, j);
    in.k.load_row(kr.data(), d, b, hk, j);
    double dp = 0, dp_mag = 0;
    for (int64_t c = 0; c < d; ++c) dp += dout[c] * vr[c], dp_mag += std::fabs(dout[c] * vr[c]);
    const double ds = x[j] * (dp - r.delta), ds_mag = x[j] * (dp_mag + r.delta_mag);
    for (int64_t c = 0; c < d; ++c) {
      r.dq[c] += scale * ds * kr[c];
      r.dq_mag[c] += scale * ds_mag * std::fabs(kr[c]);
      r.dq_floor[c] += scale * std::fabs(kr[c]);
    }
  }
  return r;
}

GroupStats reference_group_stats(const AttentionParams& p, const AttentionInputs& in, int64_t b, int64_t hk) {
  const int64_t group = p.heads / p.kv_heads, d = p.head_dim;
  GroupStats s;
  std::vector<double> dout(d);
  for (int64_t g = 0; g < group; ++g)
    for (int64_t i = 0; i < p.seq_q; ++i) {
      const QueryRowResult r = reference_query_row(p, in, b, hk * group + g, i, false);
      in.d_o.load_row(dout.data(), d, b, hk * group + g, i);
      double delta = 0, mag = 0;
      for (int64_t c = 0; c < d; ++c) delta += dout[c] * r.o[c], mag += std::fabs(dout[c] * r.o[c]);
      s.lse.push_back(r.lse);
      s.delta.push_back(delta);
      s.delta_mag.push_back(mag);
    }
  return s;
}

KvRowResult reference_kv_row(const AttentionParams& p, const AttentionInputs& in, const GroupStats& stats,
                             int64_t b, int64_t hk, int64_t j) {
  const int64_t d = p.head_dim, group = p.heads / p.kv_heads;
  const double scale = p.softmax_scale();
  std::vector<double> kr(d), vr(d), q(d), dout(d);
  in.k.load_row(kr.data(), d, b, hk, j);
  in.v.load_row(vr.data(), d, b, hk, j);
  KvRowResult r;
  r.dk.assign(d, 0.0);
  r.dv.assign(d, 0.0);
  r.dk_mag.assign(d, 0.0);
  r.dv_mag.assign(d, 0.0);
  r.dk_floor.assign(d, 0.0);
  r.dv_floor.assign(d, 0.0);
  for (int64_t g = 0; g < group; ++g) {
    const int64_t h = hk * group + g;
    for (int64_t i = p.causal ? j : 0; i < p.seq_q; ++i) {  // the query rows that see key j
      const size_t si = static_cast<size_t>(g * p.seq_q + i);
      in.q.load_row(q.data(), d, b, h, i);
      in.d_o.load_row(dout.data(), d, b, h, i);
      double dot = 0, dp = 0, dp_mag = 0;
      for (int64_t c = 0; c < d; ++c)
        dot += q[c] * kr[c], dp += dout[c] * vr[c], dp_mag += std::fabs(dout[c] * vr[c]);
      const double prob = std::exp(scale * dot - stats.lse[si]);
      const double ds = prob * (dp - stats.delta[si]), ds_mag = prob * (dp_mag + stats.delta_mag[si]);
      for (int64_t c = 0; c < d; ++c) {
        r.dv[c] += prob * dout[c];
        r.dv_mag[c] += prob * std::fabs(dout[c]);
        r.dk[c] += scale * ds * q[c];
        r.dk_mag[c] += scale * ds_mag * std::fabs(q[c]);
        r.dv_floor[c] += std::fabs(dout[c]);
        r.dk_floor[c] += scale * std::fabs(q[c]);
      }
    }
  }
  return r;
}

FullReference reference_attention(const AttentionParams& p, const AttentionInputs& in, bool with_grad) {
  const int64_t d = p.head_dim;
  FullReference f;
  f.o.resize(static_cast<size_t>(p.q_elems()));
  f.lse.resize(static_cast<size_t>(p.lse_elems()));
  if (with_grad) {
    f.dq.resize(static_cast<size_t>(p.q_elems()));
    f.dk.resize(static_cast<size_t>(p.kv_elems()));
    f.dv.resize(static_cast<size_t>(p.kv_elems()));
  }
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t i = 0; i < p.seq_q; ++i) {
        const QueryRowResult r = reference_query_row(p, in, b, h, i, with_grad);
        const size_t row = static_cast<size_t>((b * p.heads + h) * p.seq_q + i);
        f.lse[row] = r.lse;
        std::copy(r.o.begin(), r.o.end(), f.o.begin() + static_cast<std::ptrdiff_t>(row * d));
        if (with_grad) std::copy(r.dq.begin(), r.dq.end(), f.dq.begin() + static_cast<std::ptrdiff_t>(row * d));
      }
  if (!with_grad) return f;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t hk = 0; hk < p.kv_heads; ++hk) {
      const GroupStats stats = reference_group_stats(p, in, b, hk);
      for (int64_t j = 0; j < p.seq_kv; ++j) {
        const KvRowResult r = reference_kv_row(p, in, stats, b, hk, j);
        const auto row = static_cast<std::ptrdiff_t>(((b * p.kv_heads + hk) * p.seq_kv + j) * d);
        std::copy(r.dk.begin(), r.dk.end(), f.dk.begin() + row);
        std::copy(r.dv.begin(), r.dv.end(), f.dv.begin() + row);
      }
    }
  return f;
}

}  // namespace gpucal::attention
