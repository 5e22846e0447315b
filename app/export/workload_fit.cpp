#include "app/export/workload_fit.h"

#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "app/common/number_text.h"
#include "app/predict/op_cost.h"

namespace gpucal::calibration {

namespace {

std::string bytes_text(int64_t b) {
  const double v = static_cast<double>(b);
  if (b >= (int64_t{1} << 20)) return significant(v / (1024.0 * 1024.0), 4) + " MiB";
  if (b >= 1024) return significant(v / 1024.0, 4) + " KiB";
  return std::to_string(b) + " B";
}

// Golden-section minimum of f on [lo, hi].
double golden(const std::function<double(double)>& f, double lo, double hi) {
  const double r = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi, c = b - r * (b - a), d = a + r * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < 80 && b - a > 1e-12 * (std::abs(a) + std::abs(b) + 1e-300); ++i) {
    if (fc < fd) {
      b = d, d = c, fd = fc, c = b - r * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd, d = a + r * (b - a), fd = f(d);
    }
  }
  return (a + b) / 2;
}

// The key's share of E at the given latency and slope (the other keys do not depend on it).
double key_error(const std::vector<FitTerm>& terms, std::size_t key, double latency, double slope) {
  double e = 0;
  for (const FitTerm& t : terms)
    if (t.key == key) {
      const double tool = t.tool_s(latency, slope);
      if (!(tool > 0)) return std::numeric_limits<double>::infinity();
      const double l = std::log(tool / t.ours_s);
      e += t.weight * l * l;
    }
  return e;
}

std::vector<double> fit_slopes(const std::vector<FitTerm>& terms, double latency, const std::vector<double>& guess) {
  std::vector<double> s(guess.size());
  for (std::size_t k = 0; k < guess.size(); ++k) s[k] = fit_slope(terms, k, latency, guess[k]);
  return s;
}

}  // namespace

std::string StepOp::describe() const {
  if (op.kind == model::OpKind::gemm)
    return "gemm " + std::to_string(op.gemm.m) + "x" + std::to_string(op.gemm.n) + "x" + std::to_string(op.gemm.k) +
           (op.gemm.batch > 1 ? " batch " + std::to_string(op.gemm.batch) : "");
  if (op.kind == model::OpKind::collective || op.kind == model::OpKind::p2p)
    return op.comm.collective + " " + op.comm.group + " n=" + std::to_string(op.comm.group_size) +
           (nnodes > 1 ? " (" + std::to_string(nnodes) + " nodes)" : "") + " " + bytes_text(op.comm.size_bytes);
  return op.bench() + " " + op.shape_text();
}

std::optional<StepOps> step_ops(const ExportWorkload& w, std::vector<std::string>& refused) {
  const predict::OpCoster coster(w.results, w.calibration, w.options.cost);
  StepOps out;
  std::map<std::string, std::size_t> index;
  double total = 0;
  const int64_t rpn = w.options.cost.ranks_per_node;
  for (int64_t stage = 0; stage < w.layout.pp; ++stage) {
    model::ParallelLayout l = w.layout;
    l.pp_stage = stage;
    const model::Workload workload = model::derive_workload(w.spec, l);
    if (stage == 0) out.step = describe_step(w, workload);
    for (const model::ModelOp& op : workload.ops) {
      std::string why;
      const auto cost = coster.cost(op, workload.layout, why);
      if (!cost) {  // left out of the fits and the shares: a hardware export needs no whole step
        out.not_costed.push_back(op.bench() + " " + op.role + " (" + op.shape_text() + "): " + why);
        continue;
      }
      const double time = cost->time_us * 1e-6 * static_cast<double>(op.calls_per_step);
      total += time;
      const std::string key = op.bench() + "|" + op.shape_text() + "|" + to_string(op.dtype);
      auto [it, added] = index.emplace(key, out.ops.size());
      if (added) {
        StepOp s{.roles = op.role, .op = op, .ours_s = cost->time_us * 1e-6};
        if (op.kind == model::OpKind::collective || op.kind == model::OpKind::p2p) {
          s.nnodes = predict::group_nnodes(op.comm.group, op.comm.group_size, workload.layout, rpn);
          s.ranks_per_node = (op.comm.group_size + s.nnodes - 1) / s.nnodes;
        }
        out.ops.push_back(s);
      } else if (("+" + out.ops[it->second].roles + "+").find("+" + op.role + "+") == std::string::npos) {
        out.ops[it->second].roles += "+" + op.role;
      }
      out.ops[it->second].share += time;
    }
  }
  if (out.ops.empty()) {
    refused.push_back("workload-aware fields: no operation of the step is measured or modelled");
    return std::nullopt;
  }
  for (StepOp& s : out.ops) s.share = total > 0 ? s.share / total : 0;
  return out;
}

double weighted_log_error(const std::vector<FitTerm>& terms, double latency, const std::vector<double>& slopes) {
  double e = 0, w = 0;
  for (std::size_t k = 0; k < slopes.size(); ++k) e += key_error(terms, k, latency, slopes[k]);
  for (const FitTerm& t : terms) w += t.weight;
  return w > 0 ? e / w : 0;
}

double fit_slope(const std::vector<FitTerm>& terms, std::size_t key, double latency, double guess) {
  bool used = false;
  for (const FitTerm& t : terms) used |= t.key == key;
  if (!used) return guess;  // no operation prices it: kept as it is
  const double center = std::log(guess > 0 ? guess : 1e-9);
  auto f = [&](double x) { return key_error(terms, key, latency, std::exp(x)); };
  double best = center, best_e = f(center);
  for (double x = center - 12; x <= center + 12; x += 0.25) {
    const double e = f(x);
    if (e < best_e) best = x, best_e = e;
  }
  return std::exp(golden(f, best - 0.25, best + 0.25));
}

LatencySlopes fit_latency_slopes(const std::vector<FitTerm>& terms, double latency_guess,
                                 const std::vector<double>& slope_guess) {
  // The scan: 0 and guess x 2^-20..2^6, then on up to guess x 2^26 while the best is its top.
  constexpr int kScanLow = -20, kScanTop = 6, kScanCeiling = 26;
  std::vector<double> grid{0};
  const double base = latency_guess > 0 ? latency_guess : 1e-6;
  for (int j = kScanLow; j <= kScanTop; ++j) grid.push_back(base * std::ldexp(1.0, j));
  auto error_at = [&](double latency) {
    return weighted_log_error(terms, latency, fit_slopes(terms, latency, slope_guess));
  };
  std::size_t best = 0;
  double best_e = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < grid.size(); ++i)
    if (const double e = error_at(grid[i]); e < best_e) best = i, best_e = e;
  // The best at the scan's top end: the minimum lies above it. Go on doubling while the error
  // falls (at most to guess x 2^kScanCeiling), so the answer is never the scan's edge.
  for (int j = kScanTop + 1; j <= kScanCeiling && best + 1 == grid.size(); ++j) {
    grid.push_back(base * std::ldexp(1.0, j));
    if (const double e = error_at(grid.back()); e < best_e) best = grid.size() - 1, best_e = e;
  }
  const double lo = best == 0 ? 0 : grid[best - 1], hi = grid[std::min(best + 1, grid.size() - 1)];
  double latency = golden(error_at, lo, hi);
  if (error_at(latency) > best_e) latency = grid[best];
  return {latency, fit_slopes(terms, latency, slope_guess)};
}

double residual_rms(const std::vector<Residual>& rows, bool after) {
  double e = 0, w = 0;
  for (const Residual& r : rows) {
    const double l = std::log((after ? r.after_s : r.before_s) / r.op->ours_s);
    e += r.op->share * l * l;
    w += r.op->share;
  }
  return w > 0 ? std::sqrt(e / w) : 0;
}

std::string residual_section(const StepOps& step, const std::vector<std::string>& changed,
                             const std::vector<Residual>& rows) {
  std::ostringstream s;
  s << "\n## Workload-aware fields\n\n"
    << "The step (`--model`): " << step.step << ".\n\n";
  if (!step.not_costed.empty()) {
    s << "Operations nothing measures or models, left out of the fits and the shares:\n\n";
    for (const auto& line : step.not_costed) s << "- " << line << "\n";
    s << "\n";
  }
  s
    << "Fields fitted to the step's operations (share-weighted least squares in log time, "
       "app/export/workload_fit.h), reference-shape value -> workload-aware value:\n\n";
  for (const auto& c : changed) s << "- " << c << "\n";
  double covered = 0;
  for (const Residual& r : rows) covered += r.op->share;
  s << "\nShare-weighted RMS log error over the " << rows.size() << " operations below ("
    << with_decimals(100 * covered, 1) << "% of the step's operation time): reference-shape fields "
    << with_decimals(residual_rms(rows, false), 4) << ", workload-aware "
    << with_decimals(residual_rms(rows, true), 4) << ".\n\n"
    << "Per operation, the tool's formula on the fields ÷ our time (measured or modelled, as "
       "`gpucal predict` costs it):\n\n"
    << "| operation | roles | shape / size | share of step | ours (us) | tool fields | tool ÷ ours, reference "
       "shape | tool ÷ ours, workload-aware |\n"
    << "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const Residual& r : rows)
    s << "| " << r.op->describe() << " | " << r.op->roles << " | " << r.op->op.shape_text() << " | "
      << significant(r.op->share, 6) << " | " << significant(r.op->ours_s * 1e6, 8) << " | " << r.fields
      << " | " << significant(r.before_s / r.op->ours_s, 6) << " | " << significant(r.after_s / r.op->ours_s, 6)
      << " |\n";
  return s.str();
}

}  // namespace gpucal::calibration
