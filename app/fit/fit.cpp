#include "app/fit/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <unsupported/Eigen/NonLinearOptimization>
#include <unsupported/Eigen/NumericalDiff>

namespace gpucal::calibration {

namespace {

constexpr double kBytesPerUsPerGbps = 1e3;  // 1 GB/s = 1e9 B/s = 1e3 B/µs

void check_points(const std::vector<SizeTimePoint>& points, double bus_factor, std::size_t min_points,
                  const char* what) {
  if (!(bus_factor > 0)) throw std::invalid_argument(std::string(what) + ": bus_factor must be > 0");
  if (points.size() < min_points)
    throw std::invalid_argument(std::string(what) + ": needs at least " + std::to_string(min_points) +
                                " points, got " + std::to_string(points.size()));
  for (const auto& p : points)
    if (!(p.size_bytes > 0) || !(p.time_us > 0))
      throw std::invalid_argument(std::string(what) + ": sizes and times must be > 0");
}

// Residual functor in the shape Eigen's NumericalDiff / LevenbergMarquardt expect.
struct ResidualFunctor {
  using Scalar = double;
  enum { InputsAtCompileTime = Eigen::Dynamic, ValuesAtCompileTime = Eigen::Dynamic };
  using InputType = Eigen::VectorXd;
  using ValueType = Eigen::VectorXd;
  using JacobianType = Eigen::MatrixXd;
  int n_params = 0, n_residuals = 0;
  std::function<void(const Eigen::VectorXd&, Eigen::VectorXd&)> residuals;
  int inputs() const { return n_params; }
  int values() const { return n_residuals; }
  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& f) const {
    residuals(x, f);
    for (int i = 0; i < f.size(); ++i)
      if (!std::isfinite(f[i])) f[i] = 1e6;  // keeps LM away from overflowing regions
    return 0;
  }
};

// Eigen LM (MINPACK lmdif-style, central-difference Jacobian). Returns the sum of squares.
double minimize_lm(const std::function<void(const Eigen::VectorXd&, Eigen::VectorXd&)>& residuals,
                   int n_residuals, Eigen::VectorXd& x) {
  ResidualFunctor functor;
  functor.n_params = static_cast<int>(x.size());
  functor.n_residuals = n_residuals;
  functor.residuals = residuals;
  Eigen::NumericalDiff<ResidualFunctor, Eigen::Central> numeric(functor);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<ResidualFunctor, Eigen::Central>> lm(numeric);
  lm.parameters.maxfev = 4000;
  lm.parameters.xtol = 1e-12;
  lm.parameters.ftol = 1e-12;
  lm.minimize(x);
  Eigen::VectorXd f(n_residuals);
  functor(x, f);
  return f.squaredNorm();
}

// The lowest-cost Levenberg–Marquardt result over several starting points.
class BestOfStarts {
 public:
  using Residuals = std::function<void(const Eigen::VectorXd&, Eigen::VectorXd&)>;
  BestOfStarts(Residuals residuals, int n_residuals) : residuals_(std::move(residuals)), n_(n_residuals) {}
  void attempt(Eigen::VectorXd q) {
    const double cost = minimize_lm(residuals_, n_, q);
    if (cost < cost_ && q.allFinite()) {
      cost_ = cost;
      best_ = q;
    }
  }
  bool found() const { return std::isfinite(cost_); }
  const Eigen::VectorXd& best() const { return best_; }

 private:
  Residuals residuals_;
  int n_;
  double cost_ = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_;
};

std::vector<double> distinct_log2_sizes(const std::vector<SizeTimePoint>& points, double bus_factor) {
  std::vector<double> xs;
  for (const auto& p : points) xs.push_back(std::log2(p.size_bytes * bus_factor));
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return xs;
}

}  // namespace

std::vector<double> multistart_log2_sizes(const std::vector<SizeTimePoint>& points, double bus_factor) {
  const std::vector<double> xs = distinct_log2_sizes(points, bus_factor);
  if (xs.size() <= static_cast<std::size_t>(kMultistartSizes)) return xs;
  std::vector<double> picked;
  for (int i = 0; i < kMultistartSizes; ++i)  // evenly spaced by rank, both ends included
    picked.push_back(xs[static_cast<std::size_t>(
        std::lround(static_cast<double>(i) * (xs.size() - 1) / (kMultistartSizes - 1)))]);
  return picked;
}

// ---- α–β ------------------------------------------------------------------------------

double predict_time_us(const AlphaBetaParams& p, double size_bytes, double bus_factor) {
  return p.alpha_us + size_bytes * bus_factor / (p.beta_gbps * kBytesPerUsPerGbps);
}

AlphaBetaParams fit_alpha_beta(const std::vector<SizeTimePoint>& points, double bus_factor) {
  check_points(points, bus_factor, 2, "alpha-beta fit");
  // Minimise sum(((a + b*B_i) - t_i) / t_i)^2: rows scaled by 1/t_i, then least squares.
  const int n = static_cast<int>(points.size());
  Eigen::MatrixXd design(n, 2);
  Eigen::VectorXd rhs(n);
  for (int i = 0; i < n; ++i) {
    const double weight = 1.0 / points[i].time_us;
    design(i, 0) = weight;
    design(i, 1) = points[i].size_bytes * bus_factor * weight;
    rhs(i) = 1.0;
  }
  Eigen::Vector2d ab = design.colPivHouseholderQr().solve(rhs);
  if (ab(0) < 0) {  // latency cannot be negative: refit t = b*B with a = 0
    ab(0) = 0;
    ab(1) = design.col(1).dot(rhs) / design.col(1).squaredNorm();
  }
  if (!(ab(1) > 0)) throw std::runtime_error("alpha-beta fit: time does not grow with size (slope <= 0)");
  return {ab(0), 1.0 / (ab(1) * kBytesPerUsPerGbps)};
}

// ---- sigmoid ----------------------------------------------------------------------------

double sigmoid_busbw_gbps(const SigmoidParams& p, double size_bytes) {
  const double x = std::log2(size_bytes);
  return p.height_gbps / (1.0 + std::exp(-p.steepness * (x - p.midpoint_log2_bytes))) + p.offset_gbps;
}

double predict_time_us(const SigmoidParams& p, double size_bytes, double bus_factor) {
  return size_bytes * bus_factor / (sigmoid_busbw_gbps(p, size_bytes) * kBytesPerUsPerGbps);
}

SigmoidParams fit_sigmoid(const std::vector<SizeTimePoint>& points, double bus_factor) {
  check_points(points, bus_factor, 4, "sigmoid fit");
  std::vector<double> bw;
  for (const auto& p : points) bw.push_back(p.size_bytes * bus_factor / (p.time_us * kBytesPerUsPerGbps));
  // Relative time residuals: (t_model - t) / t = bw / bw_model - 1.
  const auto residuals = [&](const Eigen::VectorXd& q, Eigen::VectorXd& f) {
    const SigmoidParams s{q[0], q[1], q[2], q[3]};
    for (std::size_t i = 0; i < points.size(); ++i)
      f[static_cast<int>(i)] = bw[i] / sigmoid_busbw_gbps(s, points[i].size_bytes) - 1.0;
  };
  const double bw_max = *std::max_element(bw.begin(), bw.end());
  const double bw_min = *std::min_element(bw.begin(), bw.end());
  BestOfStarts search(residuals, static_cast<int>(points.size()));
  // Multi-start: the midpoint at each start size, a few steepnesses.
  for (double x0 : multistart_log2_sizes(points, 1.0))
    for (double k : {0.3, 1.0, 3.0}) {
      Eigen::VectorXd q(4);
      q << bw_max - bw_min, k, x0, bw_min;
      search.attempt(q);
    }
  if (!search.found()) throw std::runtime_error("sigmoid fit did not converge");
  const Eigen::VectorXd& best = search.best();
  // (H, k, x0, y0) and (-H, -k, x0, y0 + H) are the same curve; report the k > 0 one.
  if (best[1] < 0) return {-best[0], -best[1], best[2], best[3] + best[0]};
  return {best[0], best[1], best[2], best[3]};
}

// ---- piecewise --------------------------------------------------------------------------

double predict_time_us(const PiecewiseParams& p, double size_bytes, double bus_factor) {
  const double bus_bytes = size_bytes * bus_factor;
  const double t_sat = p.overhead_us + bus_bytes / (p.bw_max_gbps * kBytesPerUsPerGbps);
  if (bus_bytes <= p.knee_bus_bytes) return p.floor_us;
  if (bus_bytes >= p.sat_bus_bytes) return t_sat;
  const double u = (std::log2(bus_bytes) - std::log2(p.knee_bus_bytes)) /
                   (std::log2(p.sat_bus_bytes) - std::log2(p.knee_bus_bytes));
  const double w = u * u * (3.0 - 2.0 * u);
  return std::exp((1.0 - w) * std::log(p.floor_us) + w * std::log(t_sat));
}

namespace {
// Unconstrained parameters q: floor = e^q0, log2 knee = q1, log2 sat = q1 + e^q2,
// bw_max = e^q3, overhead = q4^2 (may reach 0).
PiecewiseParams piecewise_from(const Eigen::VectorXd& q) {
  return {std::exp(q[0]), std::exp2(q[1]), std::exp2(q[1] + std::exp(q[2])), std::exp(q[3]), q[4] * q[4]};
}
}  // namespace

PiecewiseParams fit_piecewise(const std::vector<SizeTimePoint>& points, double bus_factor) {
  check_points(points, bus_factor, 5, "piecewise fit");
  double t_min = std::numeric_limits<double>::infinity(), bw_max = 0;
  for (const auto& p : points) {
    t_min = std::min(t_min, p.time_us);
    bw_max = std::max(bw_max, p.size_bytes * bus_factor / (p.time_us * kBytesPerUsPerGbps));
  }
  const auto residuals = [&](const Eigen::VectorXd& q, Eigen::VectorXd& f) {
    const PiecewiseParams p = piecewise_from(q);
    for (std::size_t i = 0; i < points.size(); ++i)
      f[static_cast<int>(i)] =
          (predict_time_us(p, points[i].size_bytes, bus_factor) - points[i].time_us) / points[i].time_us;
  };
  BestOfStarts search(residuals, static_cast<int>(points.size()));
  const std::vector<double> xs = multistart_log2_sizes(points, bus_factor);
  for (std::size_t i = 0; i + 1 < xs.size(); ++i)
    for (std::size_t j = i + 1; j < xs.size(); ++j) {
      Eigen::VectorXd q(5);
      q << std::log(t_min), xs[i], std::log(xs[j] - xs[i]), std::log(bw_max), std::sqrt(0.5 * t_min);
      search.attempt(q);
    }
  if (!search.found()) throw std::runtime_error("piecewise fit did not converge");
  return piecewise_from(search.best());
}

}  // namespace gpucal::calibration
