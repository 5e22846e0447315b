#include "bench_gemm/gemm_op.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "bench_gemm/gemm_formulas.h"
#include "bench_gemm/gemm_reference.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"

namespace gpucal::gemm {

namespace {

// Raw bytes of a device buffer on the host, read element-wise as double.
struct HostView {
  std::vector<unsigned char> raw;
  int code = 0;
  HostView(Backend& be, const void* src, size_t elems, DType t) : raw(elems * dtype_bytes(t)), code(static_cast<int>(t)) {
    be.copy(raw.data(), src, raw.size());
    be.synchronize();
  }
  double operator[](int64_t i) const { return elem::load_as_double(raw.data(), static_cast<uint64_t>(i), code); }
};

size_t a_bytes(const GemmProblem& p) { return dtype_bytes(p.input) * static_cast<size_t>(p.a_elems() * p.batch); }
size_t b_bytes(const GemmProblem& p) { return dtype_bytes(p.input_b) * static_cast<size_t>(p.b_elems() * p.batch); }
size_t c_bytes(const GemmProblem& p) { return dtype_bytes(p.output) * static_cast<size_t>(p.c_elems() * p.batch); }

}  // namespace

InputRange input_range(DType storage) {
  switch (storage) {
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: {
      const double q = kFp8InputAmax / fp8_scale(kFp8InputAmax, storage);
      return {-q, q};
    }
    case DType::int8: return {-64.0, 64.0};
    default: return {-1.0, 1.0};
  }
}

std::string effective_regime(const std::string& measure_regime, const GemmRunOptions& o) {
  if (o.graph_launches > 0) return o.rotate ? "graph-cold-rotate" : "graph";
  if (o.rotate) return "cold-rotate";
  return measure_regime;
}

std::vector<CheckedElement> elements_to_check(const GemmProblem& p, uint64_t seed, size_t max_sampled) {
  std::vector<CheckedElement> out;
  const double total = static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.batch);  // no wrap
  if (total <= static_cast<double>(max_sampled)) {
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

GemmOp::GemmOp(GemmProblem p, std::string impl, std::string measure_regime, GemmRunOptions options)
    : p_(std::move(p)), impl_(std::move(impl)), measure_regime_(std::move(measure_regime)), options_(std::move(options)) {}

std::string GemmOp::point() const {
  const std::string variant = options_.autotune > 0 ? "autotune" + std::to_string(options_.autotune) : "";
  return p_.point(impl_, effective_regime(measure_regime_, options_), variant);
}

void GemmOp::describe(Row& row) const {
  p_.describe(row);
  row.set("regime", effective_regime(measure_regime_, options_))
      .set("graph_launches", static_cast<int64_t>(options_.graph_launches));
  if (options_.workspace_bytes > 0) row.set("workspace_limit_bytes", static_cast<int64_t>(options_.workspace_bytes));
}

// Copy i of an operand starts at i * rotation_stride_bytes(its size): 256-byte aligned.
void* GemmOp::a_at(int copy) const {
  return static_cast<unsigned char*>(a_.get()) + rotation_stride_bytes(a_bytes(p_)) * copy;
}
void* GemmOp::b_at(int copy) const {
  return static_cast<unsigned char*>(b_.get()) + rotation_stride_bytes(b_bytes(p_)) * copy;
}
void* GemmOp::c_at(int copy) const {
  return c_.get() ? static_cast<unsigned char*>(c_.get()) + rotation_stride_bytes(c_bytes(p_)) * (copy % c_copies_)
                  : nullptr;
}

void GemmOp::fill_inputs() {
  const InputRange ra = input_range(p_.input), rb = input_range(p_.input_b), rc = input_range(p_.output);
  backend_->fill_random(a_.get(), p_.a_elems() * p_.batch, p_.input, seed_ + 1, ra.lo, ra.hi);
  backend_->fill_random(b_.get(), p_.b_elems() * p_.batch, p_.input_b, seed_ + 2, rb.lo, rb.hi);
  if (c_.get()) backend_->fill_random(c_.get(), p_.c_elems() * p_.batch, p_.output, seed_ + 3, rc.lo, rc.hi);
  // Rotated copies are byte-identical, so any copy's result matches the reference.
  for (int64_t i = 1; i < copies_; ++i) {
    backend_->copy(a_at(static_cast<int>(i)), a_.get(), a_bytes(p_));
    backend_->copy(b_at(static_cast<int>(i)), b_.get(), b_bytes(p_));
    if (c_.get() && i < c_copies_) backend_->copy(c_at(static_cast<int>(i)), c_.get(), c_bytes(p_));
  }
}

void GemmOp::setup(Backend& backend, const RunConfig& config) {
  backend_ = &backend;
  config_ = &config;
  next_copy_ = 0;
  graph_ready_ = false;
  autotuned_ = false;
  // Fresh inputs per point: the seed mixes the run seed with the point's name.
  seed_ = config.seed ^ std::hash<std::string>{}(point());
  // Before any integer product of the dimensions: a shape that cannot fit is a recorded skip.
  require_memory(backend, p_.bytes(), "A, B, C and D");
  // In-place libraries read C from D, which stays single (and may stay cached): documented.
  const bool read_c = p_.beta != 0.0 && !output_in_place();
  const size_t set_bytes = a_bytes(p_) + b_bytes(p_) + (read_c ? c_bytes(p_) : 0);
  copies_ = options_.rotate ? rotation_copies(set_bytes, backend.info().llc_bytes) : 1;
  if (options_.rotate && static_cast<double>(set_bytes) * static_cast<double>(copies_) >
                             0.5 * static_cast<double>(backend.info().memory_bytes)) {
    std::ostringstream msg;
    msg << "cold-rotate needs " << copies_ << " copies of " << set_bytes << " bytes, more than half the memory";
    throw SkipPoint(msg.str());
  }
  // The library's verdict needs the problem and its descriptors, not the data: a point the
  // library lacks is skipped before gigabytes are allocated and filled.
  prepare();
  a_ = backend.allocate(rotation_stride_bytes(a_bytes(p_)) * copies_);
  b_ = backend.allocate(rotation_stride_bytes(b_bytes(p_)) * copies_);
  d_ = backend.allocate(c_bytes(p_));
  c_copies_ = read_c ? copies_ : 1;
  if (p_.beta != 0.0) c_ = backend.allocate(rotation_stride_bytes(c_bytes(p_)) * c_copies_);
  fill_inputs();
  if (options_.autotune > 0) autotune();
  if (options_.graph_launches > 0) {
    const int n = options_.graph_launches;
    capture_graph([this, n] {
      for (int i = 0; i < n; ++i) run(static_cast<int>(i % copies_));
    });
    graph_ready_ = true;
  }
  backend.synchronize();
}

void GemmOp::capture_graph(const std::function<void()>&) {
  throw SkipPoint("graph replay needs a GPU backend; " + impl_ + " has no graphs");
}

void GemmOp::launch() {
  if (graph_ready_) {
    replay_graph();
    return;
  }
  run(next_copy_);
  next_copy_ = static_cast<int>((next_copy_ + 1) % copies_);
}

void GemmOp::autotune() {
  const int n = std::min(options_.autotune, candidate_count());
  // Short, same-regime timings: enough to rank candidates, not the row's measurement.
  MeasureConfig quick = config_->measure;
  quick.max_time_s = std::min(quick.max_time_s, 0.25);
  quick.warmup_time_s = std::min(quick.warmup_time_s, 0.02);
  quick.min_samples = std::min(quick.min_samples, 5);
  std::vector<CandidateTiming> timings;
  for (int i = 0; i < n; ++i) {
    CandidateTiming t;
    t.index = i;
    try {
      use_candidate(i);
      const Measurement m = measure(*backend_, quick, [this] { launch(); });
      t.seconds = m.seconds.median;
      t.valid = t.seconds > 0;
      if (!t.valid) t.error = "no time measured";
    } catch (const std::exception& e) {
      t.error = e.what();
    }
    timings.push_back(t);
  }
  choice_ = choose_best(timings);
  use_candidate(choice_.best_index);
  autotuned_ = true;
}

Verification GemmOp::verify_on_host(double* max_err) const {
  Verification v;
  HostView a(*backend_, a_.get(), p_.a_elems() * p_.batch, p_.input);
  HostView b(*backend_, b_.get(), p_.b_elems() * p_.batch, p_.input_b);
  HostView d(*backend_, d_.get(), p_.c_elems() * p_.batch, p_.output);
  std::unique_ptr<HostView> c;
  // In-place libraries read C from D: the reference reads the C buffer, which holds the
  // same values D started from.
  if (p_.beta != 0.0) c = std::make_unique<HostView>(*backend_, c_.get(), p_.c_elems() * p_.batch, p_.output);
  // tf32 math rounds inputs inside the library; the reference uses the stored fp32 inputs,
  // and the tolerance accounts for that rounding. fp8 inputs are dequantized by the scales.
  const double tol = tolerance(p_);
  const double scale = p_.alpha * p_.scale_a * p_.scale_b;
  int64_t bad = 0;
  *max_err = 0;
  const auto elements = elements_to_check(p_, seed_);
  for (const auto& e : elements) {
    double ref = 0, norm = 0;
    for (int64_t l = 0; l < p_.k; ++l) {
      const int64_t ai = e.batch * p_.a_elems() + (p_.trans_a() ? e.row * p_.lda() + l : l * p_.lda() + e.row);
      const int64_t bi = e.batch * p_.b_elems() + (p_.trans_b() ? l * p_.ldb() + e.col : e.col * p_.ldb() + l);
      const double term = scale * a[ai] * b[bi];
      ref += term;
      norm += std::fabs(term);
    }
    const int64_t ci = e.batch * p_.c_elems() + e.col * p_.ldc() + e.row;
    if (c) {
      ref += p_.beta * (*c)[ci];
      norm += std::fabs(p_.beta * (*c)[ci]);
    }
    const double err = std::fabs(d[ci] - ref) / (norm > 0 ? norm : 1.0);
    if (!(err <= tol)) ++bad;  // NaN-safe
    *max_err = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(*max_err, err);
  }
  v.status = bad == 0 ? "ok" : "fail";
  v.max_rel_err = *max_err;
  if (bad)
    v.detail = "host fp64: " + std::to_string(bad) + " of " + std::to_string(elements.size()) +
               " checked elements outside tolerance " + format_number(tol);
  return v;
}

Verification GemmOp::verify() {
  // Poison: a kernel that writes nothing leaves NaN, which fails every comparison.
  // In-place libraries with beta != 0 start from C instead; a no-op kernel then leaves C,
  // which differs from alpha*AB + beta*C.
  if (output_in_place() && p_.beta != 0.0)
    backend_->copy(d_.get(), c_.get(), c_bytes(p_));
  else
    backend_->fill_constant(d_.get(), p_.c_elems() * p_.batch, p_.output, std::numeric_limits<double>::quiet_NaN());
  launch();
  if (config_->inject_fault == "corrupt-output") backend_->fill_constant(d_.get(), 1, p_.output, 12345.0);
  backend_->synchronize();

  double host_err = 0;
  Verification v = verify_on_host(&host_err);
  const bool sampled = p_.m * p_.n * p_.batch > 2048;
  verify_method_ = sampled ? "host-fp64-sampled" : "host-fp64-all";
  verified_elements_ = elements_to_check(p_, seed_).size();
  tolerance_used_ = tolerance(p_);
  if (!backend_->is_host()) {
    // Every element (or, for the largest shapes, a covering set of tiles) on the device
    // against the reference kernel (fp32 accumulate).
    ReferenceArgs r;
    r.a_type = static_cast<int>(p_.input);
    r.b_type = static_cast<int>(p_.input_b);
    r.c_type = r.d_type = static_cast<int>(p_.output);
    r.trans_a = p_.trans_a();
    r.trans_b = p_.trans_b();
    r.m = p_.m;
    r.n = p_.n;
    r.k = p_.k;
    r.batch = p_.batch;
    r.lda = p_.lda();
    r.ldb = p_.ldb();
    r.ldc = p_.ldc();
    r.stride_a = p_.a_elems();
    r.stride_b = p_.b_elems();
    r.stride_c = p_.c_elems();
    r.alpha = p_.alpha;
    r.beta = p_.beta;
    r.ab_scale = p_.scale_a * p_.scale_b;
    r.a = a_.get();
    r.b = b_.get();
    r.c = c_.get();
    r.d = d_.get();
    r.tolerance = tolerance(p_, /*gpu_reference=*/true);
    r.tile_step = reference_tile_step(p_.m, p_.n, p_.k, p_.batch, kReferenceFlopBudget);
    r.stream = backend_->stream();
    ReferenceResult res;
    bool ran = false;
#if defined(GPUCAL_HAVE_CUDA)
    if (backend_->name() == "cuda") res = cuda::reference_check(r), ran = true;
#endif
#if defined(GPUCAL_HAVE_HIP)
    if (backend_->name() == "hip") res = hip::reference_check(r), ran = true;
#endif
    if (ran) {
      verify_method_ = (sampled ? "host-fp64-sampled" : "host-fp64-all") +
                       std::string(r.tile_step > 1 ? "+gpu-reference-tiles" : "+gpu-reference-all");
      verified_elements_ = res.checked;
      tolerance_used_ = r.tolerance;
      v.max_rel_err = std::max(v.max_rel_err, res.max_rel_err);
      if (res.bad > 0) {
        v.status = "fail";
        v.detail += std::string(v.detail.empty() ? "" : "; ") + "gpu reference: " + std::to_string(res.bad) + " of " +
                    std::to_string(res.checked) + " elements outside tolerance " + format_number(r.tolerance) +
                    " (max error " + format_number(res.max_rel_err) + ")";
      }
    }
  }
  return v;
}

bool GemmOp::annotate(Row& row, const Measurement& m) const {
  // A graph sample times graph_launches GEMMs: the row reports per-GEMM times.
  const double per = options_.graph_launches > 0 ? static_cast<double>(options_.graph_launches) : 1.0;
  if (per != 1.0) {
    const Summary& s = m.seconds;
    row.set("time_us_median", s.median / per * 1e6)
        .set("time_us_p10", s.p10 / per * 1e6)
        .set("time_us_p90", s.p90 / per * 1e6)
        .set("time_us_min", s.min / per * 1e6)
        .set("time_us_max", s.max / per * 1e6)
        .set("time_us_mean", s.mean / per * 1e6)
        .set("time_us_stdev", s.stdev / per * 1e6)
        .set("launches_per_sample", static_cast<int64_t>(m.launches_per_sample * options_.graph_launches));
  }
  const double t = m.seconds.median / per;
  const double tflops = p_.flops() / t / 1e12;
  const DeviceInfo& dev = backend_->info();
  const Peak peak = peak_tflops(dev, p_.math);
  const PeakCheck check = check_against_peak(tflops, peak);
  const double mem_gbps = peak_memory_gbps(dev);
  const double t_compute = peak.tflops > 0 ? p_.flops() / (peak.tflops * 1e12) : 0;
  const double t_memory = mem_gbps > 0 ? p_.bytes() / (mem_gbps * 1e9) : 0;
  row.set("tflops", tflops)
      .set("peak_tflops", peak.tflops)
      .set("peak_source", peak.source)
      .set("efficiency", check.efficiency)
      .set("achieved_gbps", p_.bytes() / t / 1e9)
      .set("roofline_bound", t_compute >= t_memory ? "compute" : "memory")
      .set("roofline_time_us", std::max(t_compute, t_memory) * 1e6)
      .set("verify_method", verify_method_)
      .set("verified_elements", static_cast<int64_t>(verified_elements_))
      .set("tolerance", tolerance_used_)
      .set("rotate_copies", copies_);

  const AlgoInfo algo = algorithm();
  row.set("algo", algo.summary).set("algo_source", autotuned_ ? "autotune" : (algo.algo_id >= 0 || algo.solution_index >= 0 ? "heuristic" : "library"));
  if (algo.algo_id >= 0) row.set("algo_id", algo.algo_id);
  if (algo.solution_index >= 0) row.set("solution_index", algo.solution_index);
  if (!algo.tile.empty()) row.set("tile", algo.tile);
  if (!algo.stages.empty()) row.set("stages", algo.stages);
  if (algo.swizzle >= 0) row.set("swizzle", algo.swizzle);
  if (!algo.reduction_scheme.empty()) row.set("reduction_scheme", algo.reduction_scheme);
  if (algo.workspace_used >= 0) row.set("workspace_bytes", algo.workspace_used);
  if (algo.library_waves >= 0) row.set("library_waves", algo.library_waves);
  row.set("split_k", algo.split_k);
  const TileShape tile = parse_tile(algo.tile);
  if (tile.known() && dev.compute_units > 0) {
    const WaveQuantization w =
        wave_quantization(p_.m, p_.n, p_.batch, tile.m, tile.n, dev.compute_units, 1, std::max<int64_t>(1, algo.split_k));
    row.set("tile_m", tile.m)
        .set("tile_n", tile.n)
        .set("tiles", w.tiles)
        .set("waves", w.waves)
        .set("wave_efficiency", w.wave_efficiency)
        .set("tile_efficiency", w.tile_efficiency);
  }
  row.set("sms", static_cast<int64_t>(dev.compute_units));
  if (autotuned_) {
    row.set("algo_rank", static_cast<int64_t>(choice_.best_index))
        .set("autotune_candidates", static_cast<int64_t>(choice_.timed))
        .set("heuristic_time_us", choice_.heuristic_seconds * 1e6)
        .set("autotune_gain", choice_.gain);
  } else if (algo.algo_id >= 0 || algo.solution_index >= 0) {
    row.set("algo_rank", static_cast<int64_t>(0));
  }
  if (check.above_peak) return false;
  if (options_.best) {
    const std::string key = to_string(p_.user_dtype()) + "->" + to_string(p_.output);
    row.set("efficiency_vs_best_so_far", options_.best->update(key, tflops, point()));
  }
  return true;
}

void GemmOp::teardown() {
  release();
  graph_ready_ = false;
  a_.reset();
  b_.reset();
  c_.reset();
  d_.reset();
}

}  // namespace gpucal::gemm
