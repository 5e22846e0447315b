#include "app/fit/fit_regime.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace gpucal::calibration {

namespace {

struct SizePoint {
  double bus_bytes = 0, time_us = 0;
  std::string label;
};

// One point per distinct size: the minimum time, the most frequent label.
std::vector<SizePoint> aggregate(const std::vector<SizeTimePoint>& points, double bus_factor) {
  std::map<double, std::pair<double, std::map<std::string, int>>> by_size;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].size_bytes > 0) || !(points[i].time_us > 0))
      throw std::invalid_argument("regime fit: sizes and times must be > 0");
    auto& entry = by_size.try_emplace(points[i].size_bytes, points[i].time_us, std::map<std::string, int>{})
                      .first->second;
    entry.first = std::min(entry.first, points[i].time_us);
    ++entry.second[points[i].label];
  }
  std::vector<SizePoint> out;
  for (const auto& [size, entry] : by_size) {
    const auto top = std::max_element(entry.second.begin(), entry.second.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    out.push_back({size * bus_factor, entry.first, top->first});
  }
  return out;
}

// Least squares of t = a + b x with relative residuals (a + b x - t) / t over sizes i..j, in O(1)
// from prefix sums; x = B / scale keeps the normal equations well conditioned.
class SegmentFitter {
 public:
  struct Line {
    double a = 0, b = 0, sse = 0;  // b per scaled unit
  };

  SegmentFitter(const std::vector<SizePoint>& s, double scale) : scale_(scale), sums_(s.size() + 1) {
    for (std::size_t k = 0; k < s.size(); ++k) {
      const double x = s[k].bus_bytes / scale, w = 1.0 / s[k].time_us;
      Sums add{w * w, x * w * w, x * x * w * w, w, x * w, 1.0};
      sums_[k + 1] = sums_[k].plus(add);
    }
  }

  Line fit(std::size_t i, std::size_t j) const {
    const Sums s = sums_[j + 1].minus(sums_[i]);
    Eigen::Matrix2d normal;
    normal << s.ww, s.xww, s.xww, s.xxww;
    const Eigen::Vector2d rhs(s.w, s.xw);
    Line l;
    if (j > i) {
      const Eigen::Vector2d ab = normal.ldlt().solve(rhs);
      l.a = ab(0);
      l.b = ab(1);
    }
    if (j == i || !std::isfinite(l.a) || !std::isfinite(l.b) || l.b < 0) {  // flat: t = a
      l.a = s.w / s.ww;
      l.b = 0;
    } else if (l.a < 0) {  // through the origin: t = b x
      l.a = 0;
      l.b = s.xw / s.xxww;
    }
    const Eigen::Vector2d ab(l.a, l.b);
    l.sse = std::max(0.0, ab.dot(normal * ab) - 2.0 * ab.dot(rhs) + s.n);
    return l;
  }

  double scale() const { return scale_; }

 private:
  struct Sums {
    double ww = 0, xww = 0, xxww = 0, w = 0, xw = 0, n = 0;
    Sums plus(const Sums& o) const {
      return {ww + o.ww, xww + o.xww, xxww + o.xxww, w + o.w, xw + o.xw, n + o.n};
    }
    Sums minus(const Sums& o) const {
      return {ww - o.ww, xww - o.xww, xxww - o.xxww, w - o.w, xw - o.xw, n - o.n};
    }
  };
  double scale_;
  std::vector<Sums> sums_;
};

// Segment boundaries as [first, last] index pairs.
using Segmentation = std::vector<std::pair<std::size_t, std::size_t>>;

// Exact dynamic program per segment count, then BIC over the counts.
Segmentation segment_by_bic(const SegmentFitter& fitter, std::size_t m, double& sse_out) {
  const std::size_t kmax = std::max<std::size_t>(1, std::min<std::size_t>(kRegimeMaxSegments, m / 2));
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> cost(kmax + 1, std::vector<double>(m, inf));
  std::vector<std::vector<std::size_t>> start(kmax + 1, std::vector<std::size_t>(m, 0));
  for (std::size_t j = 1; j < m; ++j) cost[1][j] = fitter.fit(0, j).sse;
  for (std::size_t k = 2; k <= kmax; ++k)
    for (std::size_t j = 2 * k - 1; j < m; ++j)
      for (std::size_t i = 2 * (k - 1); i + 1 <= j; ++i) {  // last segment i..j, >= 2 sizes
        if (!std::isfinite(cost[k - 1][i - 1])) continue;
        const double c = cost[k - 1][i - 1] + fitter.fit(i, j).sse;
        if (c < cost[k][j]) {
          cost[k][j] = c;
          start[k][j] = i;
        }
      }
  std::size_t best_k = 1;
  double best_bic = inf;
  const double n = static_cast<double>(m);
  for (std::size_t k = 1; k <= kmax; ++k) {
    if (!std::isfinite(cost[k][m - 1])) continue;
    const double bic = n * std::log((cost[k][m - 1] + n * kRegimeNoiseRel * kRegimeNoiseRel) / n) +
                       static_cast<double>(3 * k - 1) * std::log(n);
    if (bic < best_bic) {
      best_bic = bic;
      best_k = k;
    }
  }
  sse_out = cost[best_k][m - 1];
  Segmentation segs;
  std::size_t j = m - 1;
  for (std::size_t k = best_k; k >= 1; --k) {
    const std::size_t i = k == 1 ? 0 : start[k][j];
    segs.push_back({i, j});
    if (k == 1) break;
    j = i - 1;
  }
  std::reverse(segs.begin(), segs.end());
  return segs;
}

// Runs of equal labels; a run of one size joins its neighbour (the previous one, else the next).
Segmentation segment_by_labels(const std::vector<SizePoint>& s) {
  Segmentation runs;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (!runs.empty() && s[runs.back().second].label == s[k].label)
      runs.back().second = k;
    else
      runs.push_back({k, k});
  }
  Segmentation merged;
  for (const auto& r : runs) {
    if (!merged.empty() && (r.first == r.second || merged.back().first == merged.back().second))
      merged.back().second = r.second;
    else
      merged.push_back(r);
  }
  if (merged.size() > 1 && merged.front().first == merged.front().second) {
    merged[1].first = 0;
    merged.erase(merged.begin());
  }
  return merged;
}

}  // namespace

const std::vector<std::string>& regime_gap_rules() {
  static const std::vector<std::string> rules{"bridge", "lower", "upper"};
  return rules;
}

bool regime_gap_falls(const RegimeParams& p, std::size_t i) {
  const RegimeGap& gap = p.gaps.at(i);
  if (gap.intersection) return false;
  const RegimeSegment &left = p.segments[i], &right = p.segments[i + 1];
  if (p.gap_rule == "bridge") return right.time_us(gap.to_bus_bytes) < left.time_us(gap.from_bus_bytes);
  const double mid =
      std::sqrt(gap.from_bus_bytes * gap.to_bus_bytes);  // no crossing: one line is below throughout
  return right.time_us(mid) < left.time_us(mid);
}

double predict_time_us(const RegimeParams& p, double size_bytes, double bus_factor) {
  if (p.segments.empty()) throw std::invalid_argument("regime model without segments");
  const double b = size_bytes * bus_factor;
  for (std::size_t s = 0; s < p.segments.size(); ++s) {
    const RegimeSegment& seg = p.segments[s];
    if (b <= seg.to_bus_bytes || s + 1 == p.segments.size()) return seg.time_us(b);
    const RegimeSegment& next = p.segments[s + 1];
    if (b >= next.from_bus_bytes) continue;
    const RegimeGap& gap = p.gaps[s];
    if (gap.intersection) return b < gap.switch_bus_bytes ? seg.time_us(b) : next.time_us(b);
    if (p.gap_rule == "lower") return std::min(seg.time_us(b), next.time_us(b));
    if (p.gap_rule == "upper") return std::max(seg.time_us(b), next.time_us(b));
    const double t0 = seg.time_us(gap.from_bus_bytes), t1 = next.time_us(gap.to_bus_bytes);
    const double u = std::log(b / gap.from_bus_bytes) / std::log(gap.to_bus_bytes / gap.from_bus_bytes);
    return std::exp((1.0 - u) * std::log(t0) + u * std::log(t1));
  }
  return p.segments.back().time_us(b);
}

namespace {

// Segments, lines and gaps for one set of sizes (the gap rule is set by the caller).
RegimeParams segment_and_fit(const std::vector<SizePoint>& sizes) {
  const SegmentFitter fitter(sizes, sizes.back().bus_bytes);
  const bool labelled =
      std::none_of(sizes.begin(), sizes.end(), [](const SizePoint& p) { return p.label.empty(); });
  RegimeParams p;
  Segmentation segs;
  if (labelled) {
    segs = segment_by_labels(sizes);
    p.breakpoints_from = "nccl_algo/nccl_proto";
  } else {
    segs = segment_by_bic(fitter, sizes.size(), p.sse);
    p.breakpoints_from = "segmented regression (BIC)";
  }
  double sse = 0;
  for (const auto& [i, j] : segs) {
    const SegmentFitter::Line l = fitter.fit(i, j);
    sse += l.sse;
    RegimeSegment seg;
    seg.from_bus_bytes = sizes[i].bus_bytes;
    seg.to_bus_bytes = sizes[j].bus_bytes;
    seg.alpha_us = l.a;
    seg.us_per_bus_byte = l.b / fitter.scale();
    seg.sizes = static_cast<int>(j - i + 1);
    if (labelled) seg.label = sizes[i].label;
    p.segments.push_back(seg);
  }
  p.sse = sse;
  for (std::size_t s = 0; s + 1 < p.segments.size(); ++s) {
    const RegimeSegment &left = p.segments[s], &right = p.segments[s + 1];
    RegimeGap gap;
    gap.from_bus_bytes = left.to_bus_bytes;
    gap.to_bus_bytes = right.from_bus_bytes;
    const double slope_gap = left.us_per_bus_byte - right.us_per_bus_byte;
    if (slope_gap != 0) {
      const double cross = (right.alpha_us - left.alpha_us) / slope_gap;
      if (cross > gap.from_bus_bytes && cross < gap.to_bus_bytes) {
        gap.intersection = true;
        gap.switch_bus_bytes = cross;
      }
    }
    p.gaps.push_back(gap);
  }
  for (std::size_t i = 0; i < p.gaps.size(); ++i) p.gaps[i].decreasing = regime_gap_falls(p, i);
  return p;
}

}  // namespace

RegimeParams fit_regime(const std::vector<SizeTimePoint>& points, double bus_factor) {
  if (!(bus_factor > 0)) throw std::invalid_argument("regime fit: bus_factor must be > 0");
  const std::vector<SizePoint> sizes = aggregate(points, bus_factor);
  if (static_cast<int>(sizes.size()) < kRegimeMinSizes)
    throw std::invalid_argument("regime fit: needs at least " + std::to_string(kRegimeMinSizes) +
                                " distinct sizes, got " + std::to_string(sizes.size()));
  RegimeParams p = segment_and_fit(sizes);
  if (static_cast<int>(sizes.size()) < kRegimeMinSizes + 1) return p;  // too few sizes to choose a gap rule
  // Leave-one-out per gap rule, on the fitted sizes (their minimum times).
  std::vector<double> error_sum(regime_gap_rules().size(), 0.0);
  for (std::size_t out = 0; out < sizes.size(); ++out) {
    std::vector<SizePoint> train(sizes);
    train.erase(train.begin() + static_cast<std::ptrdiff_t>(out));
    RegimeParams fold = segment_and_fit(train);
    for (std::size_t r = 0; r < regime_gap_rules().size(); ++r) {
      fold.gap_rule = regime_gap_rules()[r];
      const double t = predict_time_us(fold, sizes[out].bus_bytes, 1.0);
      error_sum[r] += std::abs(t - sizes[out].time_us) / sizes[out].time_us;
    }
  }
  std::size_t best = 0;
  for (std::size_t r = 0; r < error_sum.size(); ++r) {
    p.gap_rule_loo_mape_pct.push_back(
        {regime_gap_rules()[r], 100.0 * error_sum[r] / static_cast<double>(sizes.size())});
    if (error_sum[r] < error_sum[best]) best = r;
  }
  p.gap_rule = regime_gap_rules()[best];
  for (std::size_t i = 0; i < p.gaps.size(); ++i) p.gaps[i].decreasing = regime_gap_falls(p, i);
  return p;
}

}  // namespace gpucal::calibration
