#include "app/fit/gemm_surface.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

namespace gpucal::calibration {

using nlohmann::json;

namespace {

using Coords = std::array<double, 4>;

Coords coords_of(double batch, double m, double n, double k) {
  return {std::log2(batch), std::log2(m), std::log2(n), std::log2(k)};
}

Coords coords_of(const GemmSample& s) { return coords_of(s.batch, s.m, s.n, s.k); }

// Weighted least squares of y on the features; nullopt when the system is singular.
std::optional<double> intercept(const std::vector<std::vector<double>>& features, const std::vector<double>& y,
                                const std::vector<double>& w) {
  const int p = static_cast<int>(features.front().size());
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(p, p);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(p);
  double total = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const Eigen::Map<const Eigen::VectorXd> f(features[i].data(), p);
    a += w[i] * f * f.transpose();
    b += w[i] * y[i] * f;
    total += w[i];
  }
  // A light ridge on everything but the intercept: a direction the shapes do not span gets no slope.
  for (int j = 1; j < p; ++j) a(j, j) += 1e-4 * total;
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(a);
  if (ldlt.info() != Eigen::Success || !ldlt.isPositive()) return std::nullopt;
  const Eigen::VectorXd coef = ldlt.solve(b);
  if (!std::isfinite(coef(0))) return std::nullopt;
  return coef(0);
}

}  // namespace

namespace {

// The measured range per coordinate and of the throughputs.
struct TableRange {
  Coords lo, hi;
  double tmin = INFINITY, tmax = 0;
};

TableRange range_of(const std::vector<GemmSample>& samples) {
  TableRange r;
  r.lo.fill(INFINITY);
  r.hi.fill(-INFINITY);
  for (const auto& s : samples) {
    const Coords c = coords_of(s);
    for (int d = 0; d < 4; ++d) {
      r.lo[d] = std::min(r.lo[d], c[d]);
      r.hi[d] = std::max(r.hi[d], c[d]);
    }
    r.tmin = std::min(r.tmin, s.tflops);
    r.tmax = std::max(r.tmax, s.tflops);
  }
  return r;
}

double squared_distance(const Coords& a, const Coords& b) {
  double d2 = 0;
  for (int d = 0; d < 4; ++d) d2 += (a[d] - b[d]) * (a[d] - b[d]);
  return d2;
}

}  // namespace

std::vector<GemmSample> gemm_samples_of(const json& gemm_table) {
  std::vector<GemmSample> samples;
  for (const auto& s : gemm_table.value("by_shape", json::array()))
    if (s.value("tflops", 0.0) > 0 && s.value("m", 0) > 0 && s.value("n", 0) > 0 && s.value("k", 0) > 0)
      samples.push_back({static_cast<double>(std::max<int64_t>(1, s.value("batch", int64_t{1}))),
                         s["m"].get<double>(), s["n"].get<double>(), s["k"].get<double>(), s["tflops"].get<double>()});
  return samples;
}

GemmEstimate gemm_surface(const std::vector<GemmSample>& samples, double batch, double m, double n, double k) {
  if (samples.empty()) throw std::invalid_argument("gemm_surface: no measured shape");
  if (!(batch > 0 && m > 0 && n > 0 && k > 0)) throw std::invalid_argument("gemm_surface: a non-positive shape");
  const TableRange range = range_of(samples);
  GemmEstimate e;
  Coords q = coords_of(batch, m, n, k);
  for (int d = 0; d < 4; ++d) {
    const double clamped = std::clamp(q[d], range.lo[d], range.hi[d]);
    e.outside_octaves += std::abs(q[d] - clamped);
    q[d] = clamped;
  }
  for (const auto& s : samples)
    if (coords_of(s) == q) {
      e.tflops = s.tflops;
      e.rule = "the measured shape";
      return e;
    }
  std::vector<std::vector<double>> quad, line, mean;
  std::vector<double> y, w;
  int near = 0;
  for (const auto& s : samples) {
    const Coords c = coords_of(s);
    const double d2 = squared_distance(c, q);
    const double weight = std::exp(-d2 / (2 * kBandwidthOctaves * kBandwidthOctaves));
    if (weight < 1e-12) continue;
    if (d2 <= 4 * kBandwidthOctaves * kBandwidthOctaves) ++near;
    std::vector<double> f{1.0, c[0] - q[0], c[1] - q[1], c[2] - q[2], c[3] - q[3]};
    line.push_back(f);
    mean.push_back({1.0});
    for (int i = 1; i <= 4; ++i)
      for (int j = i; j <= 4; ++j) f.push_back(f[i] * f[j]);
    quad.push_back(f);
    y.push_back(std::log(s.tflops));
    w.push_back(weight);
  }
  std::optional<double> at;
  // 15 coefficients want a good many more shapes near; 5 a few more.
  if (near >= 30) {
    at = intercept(quad, y, w);
    e.rule = "local quadratic of " + std::to_string(near) + " shapes";
  }
  if (!at && near >= 8) {
    at = intercept(line, y, w);
    e.rule = "local line of " + std::to_string(near) + " shapes";
  }
  if (!at && !y.empty()) {
    at = intercept(mean, y, w);
    e.rule = "local mean of " + std::to_string(y.size()) + " shapes";
  }
  if (!at) {  // every shape too far for a weight: the nearest one
    double best = INFINITY;
    for (const auto& s : samples)
      if (const double d2 = squared_distance(coords_of(s), q); d2 < best) {
        best = d2;
        e.tflops = s.tflops;
      }
    e.rule = "the nearest shape";
    return e;
  }
  e.tflops = std::clamp(std::exp(*at), range.tmin, range.tmax);
  return e;
}

double gemm_loglog_flops(const std::vector<GemmSample>& kept, double batch, double m, double n, double k) {
  // ln TFLOP/s per ln FLOP, shapes of one FLOP count averaged.
  std::map<double, std::pair<double, int>> by_flop;
  for (const auto& s : kept) {
    auto& [sum, count] = by_flop[std::log(s.batch * s.m * s.n * s.k)];
    sum += std::log(s.tflops);
    ++count;
  }
  if (by_flop.empty()) return 0;
  const double x = std::log(batch * m * n * k);
  auto above = by_flop.lower_bound(x);
  if (above == by_flop.end()) return std::exp(std::prev(above)->second.first / std::prev(above)->second.second);
  if (above == by_flop.begin() || above->first == x) return std::exp(above->second.first / above->second.second);
  const auto below = std::prev(above);
  const double y0 = below->second.first / below->second.second, y1 = above->second.first / above->second.second;
  const double t = (x - below->first) / (above->first - below->first);
  return std::exp(y0 + t * (y1 - y0));
}

double gemm_xla_rule(const std::vector<GemmSample>& kept, double batch, double m, double n, double k) {
  std::map<std::array<double, 4>, double> at;
  std::array<double, 4> lo, hi;
  lo.fill(INFINITY);
  hi.fill(0);
  for (const auto& s : kept) {
    const std::array<double, 4> p{s.batch, s.m, s.k, s.n};
    at[p] = s.tflops;
    for (int d = 0; d < 4; ++d) {
      lo[d] = std::min(lo[d], p[d]);
      hi[d] = std::max(hi[d], p[d]);
    }
  }
  const std::array<double, 4> q{batch, m, k, n};
  // Per dimension: the powers of two around q (q/2 and 2q for a power of two), within the table.
  std::array<std::array<double, 2>, 4> sides;
  for (int d = 0; d < 4; ++d) {
    const double l2 = std::log2(q[d]);
    const bool pow2 = std::abs(l2 - std::round(l2)) < 1e-9;
    double below = pow2 ? q[d] / 2 : std::exp2(std::floor(l2)), above = pow2 ? q[d] * 2 : std::exp2(std::ceil(l2));
    sides[d] = {std::clamp(below, lo[d], hi[d]), std::clamp(above, lo[d], hi[d])};
  }
  double sum = 0, weights = 0;
  std::set<std::array<double, 4>> seen;
  for (int corner = 0; corner < 16; ++corner) {
    std::array<double, 4> p;
    for (int d = 0; d < 4; ++d) p[d] = sides[d][(corner >> d) & 1];
    if (!seen.insert(p).second) continue;
    const auto it = at.find(p);
    if (it == at.end()) continue;
    double d2 = 0;
    for (int d = 0; d < 4; ++d) d2 += (p[d] - q[d]) * (p[d] - q[d]);
    const double weight = 1.0 / (d2 + 1.0);
    sum += weight * it->second;
    weights += weight;
  }
  return weights > 0 ? sum / weights : 0;
}

namespace {

json error_summary(std::vector<double> errors_pct) {
  std::sort(errors_pct.begin(), errors_pct.end());
  if (errors_pct.empty()) return {{"shapes", 0}};
  const auto at = [&](double q) {
    return errors_pct[std::min(errors_pct.size() - 1, static_cast<std::size_t>(std::ceil(q * errors_pct.size())) - 1)];
  };
  const std::size_t n = errors_pct.size();
  const double median = n % 2 ? errors_pct[n / 2] : 0.5 * (errors_pct[n / 2 - 1] + errors_pct[n / 2]);
  return {{"shapes", n}, {"median_pct", median}, {"p90_pct", at(0.9)}, {"max_pct", errors_pct.back()}};
}

json score_split(const std::string& name, const std::vector<GemmSample>& samples, const std::vector<bool>& held) {
  std::vector<GemmSample> kept;
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (!held[i]) kept.push_back(samples[i]);
  std::vector<double> surface, loglog, xla;
  int xla_missing = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!held[i]) continue;
    const auto& s = samples[i];
    const auto err = [&](double predicted) { return 100.0 * std::abs(predicted / s.tflops - 1.0); };
    surface.push_back(err(gemm_surface(kept, s.batch, s.m, s.n, s.k).tflops));
    loglog.push_back(err(gemm_loglog_flops(kept, s.batch, s.m, s.n, s.k)));
    const double x = gemm_xla_rule(kept, s.batch, s.m, s.n, s.k);
    if (x > 0)
      xla.push_back(err(x));
    else
      ++xla_missing;
  }
  json out = {{"split", name},
              {"held_out", surface.size()},
              {"kept", kept.size()},
              {"surface", error_summary(surface)},
              {"loglog_flops", error_summary(loglog)},
              {"xla_rule", error_summary(xla)}};
  if (xla_missing > 0) out["xla_rule"]["no_kept_corner"] = xla_missing;
  return out;
}

}  // namespace

json gemm_holdout_scores(const std::vector<GemmSample>& input) {
  json out = {{"splits", json::array()}};
  if (input.size() < 6) return out;
  std::vector<GemmSample> samples = input;
  std::sort(samples.begin(), samples.end(), [](const GemmSample& a, const GemmSample& b) {
    return std::tie(a.batch, a.m, a.n, a.k) < std::tie(b.batch, b.m, b.n, b.k);
  });
  std::vector<bool> held(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) held[i] = i % 3 == 1;
  out["splits"].push_back(score_split("every 3rd shape", samples, held));
  // A whole middle value of k, then of batch: a dimension's value never measured.
  for (const auto& [name, value_of] :
       std::vector<std::pair<std::string, std::function<double(const GemmSample&)>>>{
           {"k", [](const GemmSample& s) { return s.k; }}, {"batch", [](const GemmSample& s) { return s.batch; }}}) {
    std::set<double> values;
    for (const auto& s : samples) values.insert(value_of(s));
    if (values.size() < 3) continue;
    const double middle = *std::next(values.begin(), static_cast<long>(values.size() / 2));
    for (std::size_t i = 0; i < samples.size(); ++i) held[i] = value_of(samples[i]) == middle;
    char label[64];
    std::snprintf(label, sizeof label, "every shape of %s = %.0f", name.c_str(), middle);
    out["splits"].push_back(score_split(label, samples, held));
  }
  const json& first = out["splits"][0]["surface"];
  if (first.contains("p90_pct")) out["interval_half_width_pct"] = first["p90_pct"];
  return out;
}

}  // namespace gpucal::calibration
