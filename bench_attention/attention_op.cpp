#include "bench_attention/attention_op.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "bench_attention/attention_reference.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"
#include "core/formulas/peaks.h"
#include "core/driver/sweep.h"

namespace gpucal::attention {

namespace {

// Q and K span [-2, 2) so that softmax rows are far from uniform (a dropped key block moves
// O well beyond the tolerance); V and dO span [-1, 1).
constexpr double kQkRange = 2.0, kVRange = 1.0;

std::vector<unsigned char> to_host(Backend& be, const Buffer& buf) {
  std::vector<unsigned char> raw(buf.bytes());
  if (!raw.empty()) be.copy(raw.data(), buf.get(), raw.size());
  return raw;
}


// Largest normalized error of one row; NaN (poison left in place) counts as infinite.
struct ErrorTally {
  double max_err = 0;
  int64_t bad = 0;
  std::map<std::string, int64_t> bad_by_tensor;
  void add(const char* tensor, double err, double tol) {
    if (!(err <= tol)) {
      ++bad;
      ++bad_by_tensor[tensor];
      max_err = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(max_err, err);
    } else {
      max_err = std::max(max_err, err);
    }
  }
  // |got - ref| <= tol · mag + underflow · floor, reported relative to the magnitude that
  // bound allows (mag + underflow · floor / tol).
  void row(const char* tensor, const double* got, const std::vector<double>& ref, const std::vector<double>& mag,
           const std::vector<double>& floor, double tol, double underflow) {
    for (size_t c = 0; c < ref.size(); ++c)
      add(tensor, std::fabs(got[c] - ref[c]) / std::max(mag[c] + underflow * floor[c] / tol, 1e-30), tol);
  }
};

// What the timed pass wrote, copied to the host.
struct DeviceOutputs {
  HostTensor o, dq, dk, dv;
  const float* lse;
};

// Each planned query row's O, LSE and (with gradients) dQ against the reference.
void check_query_rows(const AttentionParams& s, const AttentionInputs& in, const DeviceOutputs& got,
                      const VerifyPlan& plan, const Tolerances& tol, bool grad, ErrorTally& tally) {
  const int64_t d = s.head_dim;
  std::vector<double> row(d);
  for (const auto& [b, h, i] : plan.q_rows) {
    const QueryRowResult r = reference_query_row(s, in, b, h, i, grad);
    got.o.load_row(row.data(), d, b, h, i);
    tally.row("O", row.data(), r.o, r.o_mag, r.o_floor, tol.out, tol.underflow);
    const double lse_dev = got.lse[(b * s.heads + h) * s.seq_q + i];
    tally.add("LSE", std::fabs(lse_dev - r.lse) / (1 + std::fabs(r.lse) + r.x_abs_max), tol.lse);
    if (grad) {
      got.dq.load_row(row.data(), d, b, h, i);
      tally.row("dQ", row.data(), r.dq, r.dq_mag, r.dq_floor, tol.grad, tol.underflow);
    }
  }
}

// A (batch, kv head) group's statistics from the implementation's LSE and O (its sampled
// rows were verified against the reference already).
GroupStats stats_from_outputs(const AttentionParams& s, const AttentionInputs& in, const DeviceOutputs& got,
                              int64_t b, int64_t hk) {
  const int64_t group = s.heads / s.kv_heads, d = s.head_dim;
  std::vector<double> row(d), row2(d);
  GroupStats g;
  for (int64_t hq = 0; hq < group; ++hq)
    for (int64_t i = 0; i < s.seq_q; ++i) {
      const int64_t h = hk * group + hq;
      got.o.load_row(row.data(), d, b, h, i);
      in.d_o.load_row(row2.data(), d, b, h, i);
      double delta = 0, mag = 0;
      for (int64_t c = 0; c < d; ++c) delta += row[c] * row2[c], mag += std::fabs(row[c] * row2[c]);
      g.lse.push_back(got.lse[(b * s.heads + h) * s.seq_q + i]);
      g.delta.push_back(delta);
      g.delta_mag.push_back(mag);
    }
  return g;
}

// Each planned key row's dK and dV against the reference, from its group's statistics.
void check_kv_rows(const AttentionParams& s, const AttentionInputs& in, const DeviceOutputs& got,
                   const VerifyPlan& plan, const Tolerances& tol, ErrorTally& tally) {
  const int64_t d = s.head_dim;
  std::vector<double> row(d);
  std::map<std::pair<int64_t, int64_t>, GroupStats> stats;
  for (const auto& [b, hk, j] : plan.kv_rows) {
    auto it = stats.find({b, hk});
    if (it == stats.end()) {
      GroupStats g = plan.exact_group_stats ? reference_group_stats(s, in, b, hk) : stats_from_outputs(s, in, got, b, hk);
      it = stats.emplace(std::make_pair(b, hk), std::move(g)).first;
    }
    const KvRowResult r = reference_kv_row(s, in, it->second, b, hk, j);
    got.dk.load_row(row.data(), d, b, hk, j);
    tally.row("dK", row.data(), r.dk, r.dk_mag, r.dk_floor, tol.grad, tol.underflow);
    got.dv.load_row(row.data(), d, b, hk, j);
    tally.row("dV", row.data(), r.dv, r.dv_mag, r.dv_floor, tol.grad, tol.underflow);
  }
}

Verification verdict(const ErrorTally& tally, const Tolerances& tol) {
  Verification result;
  result.max_rel_err = tally.max_err;
  result.status = tally.bad == 0 ? "ok" : "fail";
  if (tally.bad) {
    std::ostringstream msg;
    msg << tally.bad << " checked elements outside tolerance (";
    bool first = true;
    for (const auto& [tensor, n] : tally.bad_by_tensor) msg << (first ? "" : ", ") << tensor << ": " << n, first = false;
    msg << "; tol out " << format_number(tol.out) << " lse " << format_number(tol.lse) << " grad "
        << format_number(tol.grad) << ")";
    result.detail = msg.str();
  }
  return result;
}

}  // namespace

VerifyPlan plan_verification(const AttentionProblem& p, uint64_t seed, double budget) {
  const auto& s = p.shape;
  const double d = static_cast<double>(s.head_dim), sq = static_cast<double>(s.seq_q),
               skv = static_cast<double>(s.seq_kv), group = static_cast<double>(s.heads / s.kv_heads);
  const bool grad = p.needs_backward();
  VerifyPlan plan;
  auto pick = [&](int64_t extent, uint64_t salt, size_t k) {
    return std::min(extent - 1, static_cast<int64_t>(elem::uniform01(seed ^ salt, k) * static_cast<double>(extent)));
  };
  // Query rows: ~4·s_kv·d reference flops each (x3 with dQ).
  const double per_q_row = 4 * skv * d * (grad ? 3 : 1);
  const double q_rows = static_cast<double>(s.batch * s.heads) * sq;
  std::set<std::array<int64_t, 3>> rows;
  if (q_rows * per_q_row <= budget) {
    plan.all_q_rows = true;
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.heads; ++h)
        for (int64_t i = 0; i < s.seq_q; ++i) rows.insert({b, h, i});
  } else {
    // Corners (element 0 is where fault injection writes) plus a seeded uniform sample.
    rows.insert({0, 0, 0});
    rows.insert({0, 0, s.seq_q - 1});
    rows.insert({s.batch - 1, s.heads - 1, 0});
    rows.insert({s.batch - 1, s.heads - 1, s.seq_q - 1});
    const size_t n = static_cast<size_t>(std::clamp(budget / per_q_row, 16.0, 1024.0));
    for (size_t k = 0; k < n; ++k) rows.insert({pick(s.batch, 0x51, k), pick(s.heads, 0x52, k), pick(s.seq_q, 0x53, k)});
  }
  plan.q_rows.assign(rows.begin(), rows.end());
  if (!grad) return plan;

  // Key rows: group statistics cost a forward of the group (4·group·s_q·s_kv·d); each key row
  // then costs ~8·group·s_q·d.
  const double stats_cost = 4 * group * sq * skv * d, per_kv_row = 8 * group * sq * d;
  const double pairs = static_cast<double>(s.batch * s.kv_heads);
  std::set<std::array<int64_t, 3>> kv;
  if (pairs * (stats_cost + skv * per_kv_row) <= budget) {
    plan.all_kv_rows = true;
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t hk = 0; hk < s.kv_heads; ++hk)
        for (int64_t j = 0; j < s.seq_kv; ++j) kv.insert({b, hk, j});
    plan.kv_rows.assign(kv.begin(), kv.end());
    return plan;
  }
  // At most two (batch, kv head) groups, first and last, so that their statistics are paid
  // for once; within each, the first and last key and a seeded sample.
  const std::set<std::pair<int64_t, int64_t>> groups = {{0, 0}, {s.batch - 1, s.kv_heads - 1}};
  const double ng = static_cast<double>(groups.size());
  plan.exact_group_stats = ng * stats_cost <= budget;
  const size_t n = static_cast<size_t>(std::clamp(budget / ng / per_kv_row, 8.0, 256.0));
  for (const auto& [b, hk] : groups) {
    kv.insert({b, hk, 0});
    kv.insert({b, hk, s.seq_kv - 1});
    for (size_t k = 0; k < n; ++k) kv.insert({b, hk, pick(s.seq_kv, 0x54 + static_cast<uint64_t>(b * 131 + hk), k)});
  }
  plan.kv_rows.assign(kv.begin(), kv.end());
  return plan;
}

void AttentionOp::setup(Backend& backend, const RunConfig& config) {
  backend_ = &backend;
  config_ = &config;
  seed_ = config.seed ^ std::hash<std::string>{}(point());
  check_supported();
  // Memory check before allocating: a point that cannot fit is a recorded skip. (allocate()
  // also turns a device out-of-memory into a skip, for what this estimate misses.)
  require_memory(backend, p_.tensor_bytes() + static_cast<double>(workspace_estimate()), "Q, K, V, O and workspace");
  const size_t e = dtype_bytes(p_.dtype);
  const size_t qn = static_cast<size_t>(p_.shape.q_elems()), kvn = static_cast<size_t>(p_.shape.kv_elems());
  q_ = backend.allocate(qn * e);
  k_ = backend.allocate(kvn * e);
  v_ = backend.allocate(kvn * e);
  o_ = backend.allocate(qn * e);
  lse_ = backend.allocate(static_cast<size_t>(p_.shape.lse_elems()) * sizeof(float));
  backend.fill_random(q_.get(), qn, p_.dtype, seed_ + 1, -kQkRange, kQkRange);
  backend.fill_random(k_.get(), kvn, p_.dtype, seed_ + 2, -kQkRange, kQkRange);
  backend.fill_random(v_.get(), kvn, p_.dtype, seed_ + 3, -kVRange, kVRange);
  if (p_.needs_backward()) {
    do_ = backend.allocate(qn * e);
    dq_ = backend.allocate(qn * e);
    dk_ = backend.allocate(kvn * e);
    dv_ = backend.allocate(kvn * e);
    backend.fill_random(do_.get(), qn, p_.dtype, seed_ + 4, -kVRange, kVRange);
  }
  prepare();
  if (p_.pass == AttnPass::bwd) forward();  // the backward's inputs O and LSE, untimed
  backend.synchronize();
}

void AttentionOp::launch() {
  if (p_.pass != AttnPass::bwd) forward();
  if (p_.pass != AttnPass::fwd) backward();
}

Verification AttentionOp::verify() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const size_t qn = static_cast<size_t>(p_.shape.q_elems()), kvn = static_cast<size_t>(p_.shape.kv_elems());
  // Poison what the timed pass writes; a kernel that skips an element leaves NaN.
  if (p_.pass != AttnPass::bwd) {
    backend_->fill_constant(o_.get(), qn, p_.dtype, nan);
    backend_->fill_constant(lse_.get(), static_cast<size_t>(p_.shape.lse_elems()), DType::fp32, nan);
  }
  if (p_.needs_backward()) {
    backend_->fill_constant(dq_.get(), qn, p_.dtype, nan);
    backend_->fill_constant(dk_.get(), kvn, p_.dtype, nan);
    backend_->fill_constant(dv_.get(), kvn, p_.dtype, nan);
  }
  launch();
  if (config_->inject_fault == "corrupt-output")
    backend_->fill_constant(p_.pass == AttnPass::fwd ? o_.get() : dq_.get(), 1, p_.dtype, 12345.0);
  backend_->synchronize();

  const auto q = to_host(*backend_, q_), k = to_host(*backend_, k_), v = to_host(*backend_, v_);
  const auto o = to_host(*backend_, o_), lse = to_host(*backend_, lse_);
  std::vector<unsigned char> dout, dq, dk, dv;
  if (p_.needs_backward()) dout = to_host(*backend_, do_), dq = to_host(*backend_, dq_), dk = to_host(*backend_, dk_),
                           dv = to_host(*backend_, dv_);
  backend_->synchronize();
  const AttentionParams& s = p_.shape;
  const AttentionInputs in{q_view(s, q.data(), p_.dtype), kv_view(s, k.data(), p_.dtype),
                           kv_view(s, v.data(), p_.dtype), q_view(s, dout.empty() ? nullptr : dout.data(), p_.dtype)};
  const DeviceOutputs got{q_view(s, o.data(), p_.dtype), q_view(s, dq.data(), p_.dtype),
                          kv_view(s, dk.data(), p_.dtype), kv_view(s, dv.data(), p_.dtype),
                          reinterpret_cast<const float*>(lse.data())};
  const Tolerances tol = tolerances(p_);
  const bool grad = p_.needs_backward();
  const VerifyPlan plan = plan_verification(p_, seed_);
  ErrorTally tally;
  check_query_rows(s, in, got, plan, tol, grad, tally);
  if (grad) check_kv_rows(s, in, got, plan, tol, tally);
  return verdict(tally, tol);
}

bool AttentionOp::annotate(Row& row, const Measurement& m) const {
  const double tflops = p_.flops() / m.seconds.median / 1e12;
  const Peak peak = peak_tflops(backend_->info(), p_.dtype);
  const PeakCheck check = check_against_peak(tflops, peak);
  row.set("tflops", tflops)
      .set("peak_tflops", peak.tflops)
      .set("peak_source", peak.source)
      .set("efficiency", check.efficiency);
  describe_impl(row);
  return !check.above_peak;
}

void AttentionOp::teardown() {
  release();
  for (Buffer* b : {&q_, &k_, &v_, &o_, &lse_, &do_, &dq_, &dk_, &dv_}) b->reset();
}

}  // namespace gpucal::attention
