#include "bench_gemm/gemm_op.h"

#include <cmath>
#include <functional>
#include <limits>

#include "harness/element_convert.h"

namespace gpucal::gemm {

namespace {
constexpr double kInputLo = -1.0, kInputHi = 1.0;

// Raw bytes of a device buffer on the host, read element-wise as double.
struct HostView {
  std::vector<unsigned char> raw;
  int code = 0;
  HostView(Backend& be, const Buffer& buf, size_t elems, DType t) : raw(elems * dtype_bytes(t)), code(static_cast<int>(t)) {
    be.copy(raw.data(), buf.get(), raw.size());
    be.synchronize();
  }
  double operator[](int64_t i) const { return elem::load_as_double(raw.data(), static_cast<uint64_t>(i), code); }
};
}  // namespace

std::vector<CheckedElement> elements_to_check(const GemmProblem& p, uint64_t seed, size_t max_sampled) {
  std::vector<CheckedElement> out;
  const int64_t total = p.m * p.n * p.batch;
  if (total <= static_cast<int64_t>(max_sampled)) {
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) out.push_back({b, i, j});
    return out;
  }
  for (int64_t b : {int64_t{0}, p.batch - 1})
    for (int64_t i : {int64_t{0}, p.m - 1})
      for (int64_t j : {int64_t{0}, p.n - 1}) out.push_back({b, i, j});
  for (size_t s = 0; s < max_sampled; ++s) {
    const auto pick = [&](int64_t extent, uint64_t salt) {
      return std::min(extent - 1, static_cast<int64_t>(elem::uniform01(seed ^ salt, s) * static_cast<double>(extent)));
    };
    out.push_back({pick(p.batch, 0x1111), pick(p.m, 0x2222), pick(p.n, 0x3333)});
  }
  return out;
}

void GemmOp::fill_inputs() {
  backend_->fill_random(a_.get(), p_.a_elems() * p_.batch, p_.input, seed_ + 1, kInputLo, kInputHi);
  backend_->fill_random(b_.get(), p_.b_elems() * p_.batch, p_.input, seed_ + 2, kInputLo, kInputHi);
  if (p_.beta != 0.0) backend_->fill_random(c_.get(), p_.c_elems() * p_.batch, p_.output, seed_ + 3, kInputLo, kInputHi);
}

void GemmOp::setup(Backend& backend, const RunConfig& config) {
  backend_ = &backend;
  config_ = &config;
  // Fresh inputs per point: the seed mixes the run seed with the point's name.
  seed_ = config.seed ^ std::hash<std::string>{}(point());
  const size_t in = dtype_bytes(p_.input), out = dtype_bytes(p_.output);
  a_ = backend.allocate(in * p_.a_elems() * p_.batch);
  b_ = backend.allocate(in * p_.b_elems() * p_.batch);
  d_ = backend.allocate(out * p_.c_elems() * p_.batch);
  if (p_.beta != 0.0) c_ = backend.allocate(out * p_.c_elems() * p_.batch);
  fill_inputs();
  prepare();
  backend.synchronize();
}

Verification GemmOp::verify() {
  Verification v;
  // Poison: a kernel that writes nothing leaves NaN, which fails every comparison.
  // In-place libraries with beta != 0 start from C instead; a no-op kernel then leaves C,
  // which differs from alpha*AB + beta*C.
  if (output_in_place() && p_.beta != 0.0)
    backend_->copy(d_.get(), c_.get(), dtype_bytes(p_.output) * p_.c_elems() * p_.batch);
  else
    backend_->fill_constant(d_.get(), p_.c_elems() * p_.batch, p_.output, std::numeric_limits<double>::quiet_NaN());
  launch();
  if (config_->inject_fault == "corrupt-output") backend_->fill_constant(d_.get(), 1, p_.output, 12345.0);
  backend_->synchronize();
  HostView a(*backend_, a_, p_.a_elems() * p_.batch, p_.input), b(*backend_, b_, p_.b_elems() * p_.batch, p_.input);
  HostView d(*backend_, d_, p_.c_elems() * p_.batch, p_.output);
  std::unique_ptr<HostView> c;
  if (p_.beta != 0.0) c = std::make_unique<HostView>(*backend_, c_, p_.c_elems() * p_.batch, p_.output);
  // tf32 math rounds inputs inside the library; the reference uses the stored fp32 inputs,
  // and the tolerance accounts for that rounding.
  const double tol = tolerance(p_);
  int64_t bad = 0;
  for (const auto& e : elements_to_check(p_, seed_)) {
    double ref = 0, scale = 0;
    for (int64_t l = 0; l < p_.k; ++l) {
      const int64_t ai = e.batch * p_.a_elems() + (p_.trans_a() ? e.row * p_.lda() + l : l * p_.lda() + e.row);
      const int64_t bi = e.batch * p_.b_elems() + (p_.trans_b() ? l * p_.ldb() + e.col : e.col * p_.ldb() + l);
      const double term = p_.alpha * a[ai] * b[bi];
      ref += term;
      scale += std::fabs(term);
    }
    const int64_t ci = e.batch * p_.c_elems() + e.col * p_.ldc() + e.row;
    if (c) {
      ref += p_.beta * (*c)[ci];
      scale += std::fabs(p_.beta * (*c)[ci]);
    }
    const double err = std::fabs(d[ci] - ref) / (scale > 0 ? scale : 1.0);
    if (!(err <= tol)) {  // NaN-safe
      ++bad;
      v.max_rel_err = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(v.max_rel_err, err);
    } else {
      v.max_rel_err = std::max(v.max_rel_err, err);
    }
  }
  v.status = bad == 0 ? "ok" : "fail";
  if (bad) v.detail = std::to_string(bad) + " checked elements outside tolerance " + format_number(tol);
  return v;
}

bool GemmOp::annotate(Row& row, const Measurement& m) const {
  const double t = m.seconds.median;
  const double tflops = p_.flops() / t / 1e12;
  const Peak peak = peak_tflops(backend_->info(), p_.math);
  const PeakCheck check = check_against_peak(tflops, peak);
  const double mem_gbps = peak_memory_gbps(backend_->info());
  const double t_compute = peak.tflops > 0 ? p_.flops() / (peak.tflops * 1e12) : 0;
  const double t_memory = mem_gbps > 0 ? p_.bytes() / (mem_gbps * 1e9) : 0;
  row.set("tflops", tflops)
      .set("peak_tflops", peak.tflops)
      .set("peak_source", peak.source)
      .set("efficiency", check.efficiency)
      .set("achieved_gbps", p_.bytes() / t / 1e9)
      .set("roofline_bound", t_compute >= t_memory ? "compute" : "memory")
      .set("roofline_time_us", std::max(t_compute, t_memory) * 1e6);
  describe_algorithm(row);
  return !check.above_peak;
}

void GemmOp::teardown() {
  release();
  a_.reset();
  b_.reset();
  c_.reset();
  d_.reset();
}

}  // namespace gpucal::gemm
