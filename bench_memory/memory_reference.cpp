#include "bench_memory/memory_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bench_memory/op_math.h"
#include "core/formulas/stream_ops.h"
#include "core/backend/element_convert.h"

namespace gpucal::memory {

double HostView::at(int64_t i) const {
  return data_ ? elem::load_as_double(data_, static_cast<uint64_t>(i), static_cast<int>(type_)) : source_->at(i);
}

namespace {

class GeneratedSource : public ElementSource {
 public:
  GeneratedSource(uint64_t seed, double lo, double hi, DType type) : seed_(seed), lo_(lo), span_(hi - lo), code_(static_cast<int>(type)) {}
  double at(int64_t i) const override {
    // Exactly what the backends' fill_random stores: the same (seed, index) value, rounded
    // to the stored type.
    unsigned char cell[8];
    elem::store_from_double(cell, 0, code_, lo_ + span_ * elem::uniform01(seed_, static_cast<uint64_t>(i)));
    return elem::load_as_double(cell, 0, code_);
  }

 private:
  uint64_t seed_;
  double lo_, span_;
  int code_;
};

}  // namespace

std::shared_ptr<const ElementSource> generated_source(uint64_t seed, double lo, double hi, DType type) {
  return std::make_shared<GeneratedSource>(seed, lo, hi, type);
}

namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

bool is_row_kernel(Kernel k) {
  switch (k) {
    case Kernel::layernorm_fwd: case Kernel::layernorm_bwd: case Kernel::rmsnorm_fwd: case Kernel::rmsnorm_bwd:
    case Kernel::softmax_fwd: case Kernel::softmax_bwd: case Kernel::cross_entropy_fwd: case Kernel::cross_entropy_bwd:
      return true;
    default: return false;
  }
}

bool has_column_units(Kernel k) { return k == Kernel::layernorm_bwd || k == Kernel::rmsnorm_bwd; }

struct Out {
  std::vector<Expected>& v;
  void add(int tensor, int64_t index, double value, double magnitude, int64_t length = 1, bool exact = false) {
    v.push_back({tensor, index, value, magnitude, length, exact});
  }
};

// A number standing for the absolute sum of the terms it is made of: a formula evaluated on
// it gives the scale its rounding errors are measured against, whatever its signs.
struct TermMagnitude {
  double v;
  TermMagnitude(double x) : v(std::fabs(x)) {}  // implicit: literals in a formula convert
  friend TermMagnitude operator+(TermMagnitude a, TermMagnitude b) { return a.v + b.v; }
  friend TermMagnitude operator-(TermMagnitude a, TermMagnitude b) { return a.v + b.v; }
  friend TermMagnitude operator*(TermMagnitude a, TermMagnitude b) { return a.v * b.v; }
  friend TermMagnitude operator/(TermMagnitude a, TermMagnitude b) { return a.v / b.v; }
  TermMagnitude operator-() const { return *this; }
};

// STREAM element-wise kernels: their functor (core/formulas/stream_ops.h) in fp64. With one
// operand the value's own size is the scale (magnitude 0); with more, the terms' absolute sum,
// which a cancellation does not shrink.
bool stream_unit(const KernelDesc& k, const Scalars& s, const std::vector<HostView>& t, int64_t i, Out out) {
  const StreamOperands o = stream_operands(k);
  return with_stream_op(k.id, [&](auto op) {
    const double x = t[static_cast<size_t>(o.x)].at(i), y = o.y < 0 ? 0.0 : t[static_cast<size_t>(o.y)].at(i);
    const double q = s.q;
    const double magnitude = decltype(op)::inputs > 1 ? op(TermMagnitude(x), TermMagnitude(y), TermMagnitude(q)).v : 0.0;
    out.add(o.out, i, op(x, y, q), magnitude);
  });
}

// Elementwise kernels (and STREAM, fma_chain, AdamW): unit = element i.
void element_unit(const KernelDesc& k, const Scalars& s, const std::vector<HostView>& t, int64_t i, Out out) {
  if (stream_unit(k, s, t, i, out)) return;
  switch (k.id) {
    case Kernel::copy: return out.add(1, i, t[0].at(i), 0, 1, true);
    case Kernel::fma_chain: {
      // Closed form of K steps of x = x*m + c: m^K x + c (1 + m + ... + m^(K-1)).
      const double m = s.fma_m, c = s.fma_c, K = s.fma_steps;
      const double mk = std::pow(m, K);
      const double geometric = m == 1.0 ? K : (1.0 - mk) / (1.0 - m);
      const bool exact = std::fabs(m) == 1.0 && c == 0.0;  // every step exact in any dtype
      return out.add(1, i, mk * t[0].at(i) + c * geometric, std::fabs(mk * t[0].at(i)) + std::fabs(c * geometric), 1,
                     exact);
    }
    case Kernel::gelu_fwd: {
      const double x = t[0].at(i);
      return out.add(1, i, x * 0.5 * std::erfc(-x * kInvSqrt2), std::fabs(x));
    }
    case Kernel::gelu_bwd: {
      const double x = t[0].at(i), dy = t[1].at(i);
      const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
      return out.add(2, i, dy * (0.5 * std::erfc(-x * kInvSqrt2) + x * pdf), std::fabs(dy) * (1 + std::fabs(x) * pdf));
    }
    case Kernel::swiglu_fwd: {
      const double a = t[0].at(i), b = t[1].at(i);
      return out.add(2, i, a / (1 + std::exp(-a)) * b, 0);
    }
    case Kernel::swiglu_bwd: {
      const double a = t[0].at(i), b = t[1].at(i), dy = t[2].at(i);
      const double sg = 1 / (1 + std::exp(-a));
      out.add(3, i, dy * b * sg * (1 + a * (1 - sg)), std::fabs(dy * b * sg) * (1 + std::fabs(a) * (1 - sg)));
      return out.add(4, i, dy * a * sg, 0);
    }
    case Kernel::residual_add: {
      const double x = t[0].at(i), r = t[1].at(i);
      return out.add(2, i, x + r, std::fabs(x) + std::fabs(r));
    }
    case Kernel::dropout_residual_add: {
      const double x = t[0].at(i), r = t[1].at(i), p = s.dropout_p;
      // The keep decision is a definition shared with the kernels (op_math.h), not arithmetic.
      const bool keep = math::dropout_keep(s.dropout_seed, static_cast<uint64_t>(i), math::dropout_threshold(s.dropout_p));
      const double kept = keep ? x / (1 - p) : 0.0;
      out.add(2, i, r + kept, std::fabs(r) + std::fabs(kept));
      return out.add(3, i, keep ? 1.0 : 0.0, 0, 1, true);
    }
    case Kernel::adamw_step: {
      const double p = t[0].at(i), g = t[1].at(i), m = t[2].at(i), v = t[3].at(i);
      const double b1 = s.beta1, b2 = s.beta2, lr = s.lr;
      const double bc1 = 1 - std::pow(b1, s.adam_step), bc2 = 1 - std::pow(b2, s.adam_step);
      const double m1 = b1 * m + (1 - b1) * g, m1_mag = std::fabs(b1 * m) + std::fabs((1 - b1) * g);
      const double v1 = b2 * v + (1 - b2) * g * g;  // every term >= 0: its own magnitude
      const double denom = std::sqrt(v1 / bc2) + s.adam_eps;
      const double decayed = p * (1 - lr * s.weight_decay);
      out.add(0, i, decayed - lr / bc1 * m1 / denom, std::fabs(decayed) + lr / bc1 * m1_mag / denom);
      out.add(2, i, m1, m1_mag);
      return out.add(3, i, v1, 0);
    }
    default: throw std::logic_error("reference: not an elementwise kernel");
  }
}

// Row r of a row kernel: its C elements start at r * C in every [rows][cols] tensor.
struct RowRef {
  const std::vector<HostView>& t;
  int64_t r, C, base;
  double Cd;
  double x_at(int tensor, int64_t j) const { return t[static_cast<size_t>(tensor)].at(base + j); }
};

void layernorm_fwd_row(const RowRef& w, const Scalars& s, Out out) {
  const int64_t C = w.C, base = w.base;
  const double Cd = w.Cd;
  double sum = 0, abs_sum = 0;
  for (int64_t j = 0; j < C; ++j) sum += w.x_at(0, j), abs_sum += std::fabs(w.x_at(0, j));
  const double mean = sum / Cd;
  double sq = 0;
  for (int64_t j = 0; j < C; ++j) sq += (w.x_at(0, j) - mean) * (w.x_at(0, j) - mean);
  const double rstd = 1 / std::sqrt(sq / Cd + s.norm_eps);
  for (int64_t j = 0; j < C; ++j) {
    const double x = w.x_at(0, j), g = w.t[1].at(j), b = w.t[2].at(j);
    out.add(3, base + j, (x - mean) * rstd * g + b, (std::fabs(x) + std::fabs(mean)) * rstd * std::fabs(g) + std::fabs(b), C);
  }
  out.add(4, w.r, mean, abs_sum / Cd, C);
  out.add(5, w.r, rstd, 0, C);
}

void rmsnorm_fwd_row(const RowRef& w, const Scalars& s, Out out) {
  double sq = 0;
  for (int64_t j = 0; j < w.C; ++j) sq += w.x_at(0, j) * w.x_at(0, j);
  const double rstd = 1 / std::sqrt(sq / w.Cd + s.norm_eps);
  for (int64_t j = 0; j < w.C; ++j) out.add(2, w.base + j, w.x_at(0, j) * rstd * w.t[1].at(j), 0, w.C);
  out.add(3, w.r, rstd, 0, w.C);
}

// layernorm_bwd (layer) and rmsnorm_bwd: the input gradient of the row.
void norm_bwd_row(const RowRef& w, bool layer, Out out) {
  const int64_t C = w.C, base = w.base;
  const double Cd = w.Cd;
  const double mean = layer ? w.t[3].at(w.r) : 0.0, rstd = w.t[layer ? 4 : 3].at(w.r);
  double sum_g = 0, sum_gx = 0, abs_g = 0, abs_gx = 0;
  for (int64_t j = 0; j < C; ++j) {
    const double g = w.x_at(0, j) * w.t[2].at(j), xhat = (w.x_at(1, j) - mean) * rstd;
    sum_g += g, sum_gx += g * xhat, abs_g += std::fabs(g), abs_gx += std::fabs(g * xhat);
  }
  const double mean_g = layer ? sum_g / Cd : 0.0, mean_gx = sum_gx / Cd;
  for (int64_t j = 0; j < C; ++j) {
    const double g = w.x_at(0, j) * w.t[2].at(j), xhat = (w.x_at(1, j) - mean) * rstd;
    const double mag = rstd * (std::fabs(g) + (layer ? abs_g / Cd : 0.0) + std::fabs(xhat) * abs_gx / Cd);
    out.add(layer ? 5 : 4, base + j, rstd * (g - mean_g - xhat * mean_gx), mag, C);
  }
}

void softmax_fwd_row(const RowRef& w, Out out) {
  double mx = -INFINITY, sum = 0;
  for (int64_t j = 0; j < w.C; ++j) mx = std::max(mx, w.x_at(0, j));
  for (int64_t j = 0; j < w.C; ++j) sum += std::exp(w.x_at(0, j) - mx);
  for (int64_t j = 0; j < w.C; ++j) {
    const double y = std::exp(w.x_at(0, j) - mx) / sum;
    out.add(1, w.base + j, y, y * std::fabs(w.x_at(0, j) - mx), w.C);
  }
}

void softmax_bwd_row(const RowRef& w, Out out) {
  double dot = 0, abs_dot = 0;
  for (int64_t j = 0; j < w.C; ++j)
    dot += w.x_at(0, j) * w.x_at(1, j), abs_dot += std::fabs(w.x_at(0, j) * w.x_at(1, j));
  for (int64_t j = 0; j < w.C; ++j) {
    const double y = w.x_at(0, j), dy = w.x_at(1, j);
    out.add(2, w.base + j, y * (dy - dot), std::fabs(y) * (std::fabs(dy) + abs_dot), w.C);
  }
}

void cross_entropy_fwd_row(const RowRef& w, Out out) {
  double mx = -INFINITY, sum = 0;
  for (int64_t j = 0; j < w.C; ++j) mx = std::max(mx, w.x_at(0, j));
  for (int64_t j = 0; j < w.C; ++j) sum += std::exp(w.x_at(0, j) - mx);
  const double lse = mx + std::log(sum);
  const double xt = w.x_at(0, static_cast<int64_t>(w.t[1].at(w.r)));
  out.add(2, w.r, lse - xt, std::fabs(lse) + std::fabs(xt) + 1, w.C);
  out.add(3, w.r, lse, std::fabs(mx) + 1, w.C);
}

void cross_entropy_bwd_row(const RowRef& w, int64_t rows, Out out) {
  const double lse = w.t[2].at(w.r), inv_rows = 1.0 / static_cast<double>(rows);
  const int64_t target = static_cast<int64_t>(w.t[1].at(w.r));
  for (int64_t j = 0; j < w.C; ++j) {
    const double z = w.x_at(0, j) - lse, p = std::exp(z) * inv_rows, hot = j == target ? inv_rows : 0.0;
    out.add(3, w.base + j, p - hot, p * (1 + std::fabs(z)) + hot);
  }
}

void row_unit(const KernelDesc& k, const Dims& d, const Scalars& s, const std::vector<HostView>& t, int64_t r, Out out) {
  const RowRef w{t, r, d.cols, r * d.cols, static_cast<double>(d.cols)};
  switch (k.id) {
    case Kernel::layernorm_fwd: return layernorm_fwd_row(w, s, out);
    case Kernel::rmsnorm_fwd: return rmsnorm_fwd_row(w, s, out);
    case Kernel::layernorm_bwd:
    case Kernel::rmsnorm_bwd: return norm_bwd_row(w, k.id == Kernel::layernorm_bwd, out);
    case Kernel::softmax_fwd: return softmax_fwd_row(w, out);
    case Kernel::softmax_bwd: return softmax_bwd_row(w, out);
    case Kernel::cross_entropy_fwd: return cross_entropy_fwd_row(w, out);
    case Kernel::cross_entropy_bwd: return cross_entropy_bwd_row(w, d.rows, out);
    default: throw std::logic_error("reference: not a row kernel");
  }
}

// Norm backward: dgamma_j (and dbeta_j) sum over every row.
void column_unit(const KernelDesc& k, const Dims& d, const std::vector<HostView>& t, int64_t j, Out out) {
  const bool layer = k.id == Kernel::layernorm_bwd;
  double dg = 0, dg_abs = 0, db = 0, db_abs = 0;
  for (int64_t r = 0; r < d.rows; ++r) {
    const double dy = t[0].at(r * d.cols + j);
    const double xhat = (t[1].at(r * d.cols + j) - (layer ? t[3].at(r) : 0.0)) * t[layer ? 4 : 3].at(r);
    dg += dy * xhat, dg_abs += std::fabs(dy * xhat), db += dy, db_abs += std::fabs(dy);
  }
  out.add(layer ? 6 : 5, j, dg, dg_abs, d.rows);
  if (layer) out.add(7, j, db, db_abs, d.rows);
}

}  // namespace

int64_t reference_units(const KernelDesc& k, const Dims& d) {
  if (k.id == Kernel::read) return read_slots(d.n);
  if (has_column_units(k.id)) return d.rows + d.cols;
  if (is_row_kernel(k.id)) return d.rows;
  return main_elements(k, d);
}

double reference_unit_cost(const KernelDesc& k, const Dims& d, int64_t unit) {
  if (k.id == Kernel::read) return static_cast<double>(read_chunk(d.n));
  if (has_column_units(k.id) && unit >= d.rows) return static_cast<double>(d.rows);
  if (is_row_kernel(k.id)) return 3.0 * static_cast<double>(d.cols);
  return 1.0;
}

void reference_unit(const KernelDesc& k, const Dims& d, const Scalars& s, const std::vector<HostView>& tensors,
                    int64_t unit, std::vector<Expected>& out) {
  Out o{out};
  if (k.id == Kernel::read) {
    const int64_t chunk = read_chunk(d.n), lo = unit * chunk, hi = std::min(d.n, lo + chunk);
    double sum = 0, abs_sum = 0;
    for (int64_t i = lo; i < hi; ++i) sum += tensors[0].at(i), abs_sum += std::fabs(tensors[0].at(i));
    return o.add(1, unit, sum, abs_sum, std::max<int64_t>(1, hi - lo));
  }
  if (has_column_units(k.id) && unit >= d.rows) return column_unit(k, d, tensors, unit - d.rows, o);
  if (is_row_kernel(k.id)) return row_unit(k, d, s, tensors, unit, o);
  element_unit(k, s, tensors, unit, o);
}

}  // namespace gpucal::memory
