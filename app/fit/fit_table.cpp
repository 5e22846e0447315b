#include "app/fit/fit_table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

namespace gpucal::calibration {

namespace {

struct LogKnots {
  std::vector<double> x, y, slope;  // ln S, ln t, secant slopes per interval
};

LogKnots log_knots(const TableParams& p) {
  if (p.size_bytes.size() < 2 || p.size_bytes.size() != p.time_us.size())
    throw std::invalid_argument("table: needs at least 2 knots");
  LogKnots k;
  for (std::size_t i = 0; i < p.size_bytes.size(); ++i) {
    k.x.push_back(std::log(p.size_bytes[i]));
    k.y.push_back(std::log(p.time_us[i]));
  }
  for (std::size_t i = 0; i + 1 < k.x.size(); ++i)
    k.slope.push_back((k.y[i + 1] - k.y[i]) / (k.x[i + 1] - k.x[i]));
  return k;
}

// Outside the knots: flat below, S^clamp(last slope, 0, 1) above. nullopt inside.
std::optional<double> extrapolate(const LogKnots& k, double x) {
  if (x <= k.x.front()) return std::exp(k.y.front());
  if (x >= k.x.back()) return std::exp(k.y.back() + std::clamp(k.slope.back(), 0.0, 1.0) * (x - k.x.back()));
  return std::nullopt;
}

std::size_t interval_of(const LogKnots& k, double x) {
  return static_cast<std::size_t>(std::upper_bound(k.x.begin(), k.x.end(), x) - k.x.begin()) - 1;
}

}  // namespace

namespace {
double pchip(const TableParams& p, double size_bytes);

// Straight lines in t against S between the neighbouring knots (α–β through the two of them);
// outside the knots the same extension as the other rules.
double size_linear(const TableParams& p, double size_bytes) {
  const LogKnots k = log_knots(p);
  if (auto v = extrapolate(k, std::log(size_bytes))) return *v;
  const std::size_t i = interval_of(k, std::log(size_bytes));
  const double u = (size_bytes - p.size_bytes[i]) / (p.size_bytes[i + 1] - p.size_bytes[i]);
  return p.time_us[i] + u * (p.time_us[i + 1] - p.time_us[i]);
}
}  // namespace

TableParams fit_table(const std::vector<SizeTimePoint>& points) {
  std::map<double, double> knots;
  for (const auto& p : points) {
    if (!(p.size_bytes > 0) || !(p.time_us > 0))
      throw std::invalid_argument("table: sizes and times must be > 0");
    auto [it, fresh] = knots.emplace(p.size_bytes, p.time_us);
    if (!fresh) it->second = std::min(it->second, p.time_us);
  }
  if (static_cast<int>(knots.size()) < kTableMinSizes)
    throw std::invalid_argument("table: needs at least " + std::to_string(kTableMinSizes) +
                                " distinct sizes");
  TableParams t;
  for (const auto& [s, time] : knots) {
    t.size_bytes.push_back(s);
    t.time_us.push_back(time);
  }
  if (t.size_bytes.size() < 4) return t;  // leave-one-out needs 3 knots per fold
  double best_err = 0;
  for (const std::string& rule : table_interpolations()) {
    double err = 0;
    for (std::size_t out = 0; out < t.size_bytes.size(); ++out) {
      TableParams fold;
      fold.interpolation = rule;
      for (std::size_t k = 0; k < t.size_bytes.size(); ++k)
        if (k != out) {
          fold.size_bytes.push_back(t.size_bytes[k]);
          fold.time_us.push_back(t.time_us[k]);
        }
      err += std::abs(predict_time_us(fold, t.size_bytes[out]) - t.time_us[out]) / t.time_us[out];
    }
    t.interpolation_loo_mape_pct[rule] = 100.0 * err / static_cast<double>(t.size_bytes.size());
    if (rule == table_interpolations().front() || err < best_err) {
      best_err = err;
      t.interpolation = rule;
    }
  }
  return t;
}

const std::vector<std::string>& table_interpolations() {
  static const std::vector<std::string> rules{"pchip", "loglog", "size_linear"};
  return rules;
}

double predict_time_us(const TableParams& p, double size_bytes) {
  if (p.interpolation == "loglog") return predict_loglog_linear(p, size_bytes);
  if (p.interpolation == "size_linear") return size_linear(p, size_bytes);
  if (p.interpolation != "pchip")
    throw std::invalid_argument("table: unknown interpolation '" + p.interpolation + "'");
  return pchip(p, size_bytes);
}

namespace {
double pchip(const TableParams& p, double size_bytes) {
  const LogKnots k = log_knots(p);
  const double x = std::log(size_bytes);
  if (auto v = extrapolate(k, x)) return *v;
  // Fritsch–Carlson derivatives: weighted harmonic mean of the neighbouring secants where they
  // agree in sign, 0 at a local extremum; one-sided secants at the ends.
  const std::size_t n = k.x.size();
  auto derivative = [&](std::size_t i) {
    if (i == 0) return k.slope.front();
    if (i == n - 1) return k.slope.back();
    const double d0 = k.slope[i - 1], d1 = k.slope[i];
    if (d0 * d1 <= 0) return 0.0;
    const double h0 = k.x[i] - k.x[i - 1], h1 = k.x[i + 1] - k.x[i];
    const double w0 = 2 * h1 + h0, w1 = h1 + 2 * h0;
    return (w0 + w1) / (w0 / d0 + w1 / d1);
  };
  const std::size_t i = interval_of(k, x);
  const double h = k.x[i + 1] - k.x[i], u = (x - k.x[i]) / h;
  const double h00 = (1 + 2 * u) * (1 - u) * (1 - u), h10 = u * (1 - u) * (1 - u);
  const double h01 = u * u * (3 - 2 * u), h11 = u * u * (u - 1);
  return std::exp(h00 * k.y[i] + h10 * h * derivative(i) + h01 * k.y[i + 1] + h11 * h * derivative(i + 1));
}

}  // namespace

double predict_loglog_linear(const TableParams& p, double size_bytes) {
  const LogKnots k = log_knots(p);
  const double x = std::log(size_bytes);
  if (auto v = extrapolate(k, x)) return *v;
  const std::size_t i = interval_of(k, x);
  return std::exp(k.y[i] + k.slope[i] * (x - k.x[i]));
}

}  // namespace gpucal::calibration
