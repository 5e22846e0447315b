#include "app/export/export_comm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "app/fit/comm_model.h"
#include "app/fit/fit.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

const json& groups_of(const json& calibration, const char* kind) {
  static const json empty = json::array();
  if (!calibration.contains("communication") || !calibration["communication"].is_object()) return empty;
  const json& c = calibration["communication"];
  return c.contains(kind) && c[kind].is_array() ? c[kind] : empty;
}

int64_t int_or(const json& g, const char* key, int64_t fallback) {
  return g.contains(key) && g[key].is_number() ? g[key].get<int64_t>() : fallback;
}

struct WindowFit {
  AlphaBetaParams params;
  std::string why;
  bool bandwidth_regime = false;
};

// The secant of the measured curve at around_bytes: the α–β through the two measured sizes that
// bracket it (the size itself and its smaller neighbour when it was measured), so the tool is
// exact at both; with a negative intercept, α = 0 and the bandwidth of the nearer size.
std::optional<WindowFit> secant_alpha_beta(const std::vector<std::pair<double, double>>& curve,
                                           double bus_factor, double around_bytes) {
  if (curve.size() < 2 || around_bytes < curve.front().first || around_bytes > curve.back().first)
    return std::nullopt;
  auto hi = std::lower_bound(curve.begin(), curve.end(), std::make_pair(around_bytes, -1.0));
  if (hi == curve.begin()) ++hi;
  const auto lo = std::prev(hi);
  const double slope_us_per_byte = (hi->second - lo->second) / (hi->first - lo->first);
  if (!(slope_us_per_byte > 0)) return std::nullopt;
  AlphaBetaParams p{lo->second - lo->first * slope_us_per_byte, bus_factor / (slope_us_per_byte * 1e3)};
  std::ostringstream why;
  why << "alpha-beta through its measured sizes " << static_cast<int64_t>(lo->first) << " and "
      << static_cast<int64_t>(hi->first) << " B around comm_bytes=" << static_cast<int64_t>(around_bytes);
  if (p.alpha_us < 0) {
    const auto& near =
        std::abs(std::log(around_bytes / lo->first)) < std::abs(std::log(around_bytes / hi->first)) ? *lo
                                                                                                    : *hi;
    p = AlphaBetaParams{0.0, near.first * bus_factor / (near.second * 1e3)};
    why.str("");
    why << "alpha 0 and the bus bandwidth of its measured size " << static_cast<int64_t>(near.first)
        << " B nearest comm_bytes=" << static_cast<int64_t>(around_bytes)
        << " (the secant there has alpha < 0)";
  }
  return WindowFit{p, why.str(), true};
}

// With around_bytes: the secant there; else α–β over the sizes >= kBandwidthRegimeBytes (3 or
// more); else the group's own all-size fit.
std::optional<WindowFit> window_alpha_beta(const json& group, double bus_factor, double around_bytes) {
  const auto curve = measured_curve(group);
  auto fit_on = [&](double lo, double hi, const std::string& label) -> std::optional<WindowFit> {
    std::vector<SizeTimePoint> points;
    for (const auto& [size, time_us] : curve)
      if (size >= lo && size <= hi) points.push_back({size, time_us});
    if (static_cast<int>(points.size()) < kAlphaBetaMinSizes) return std::nullopt;
    AlphaBetaParams p;
    try {
      p = fit_alpha_beta(points, bus_factor);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    double worst = 0;
    for (const auto& pt : points)
      worst = std::max(worst, std::abs(predict_time_us(p, pt.size_bytes, bus_factor) / pt.time_us - 1));
    std::ostringstream why;
    why.precision(3);
    why << "alpha-beta over its " << points.size() << " sizes " << label << " ("
        << static_cast<int64_t>(points.front().size_bytes) << ".."
        << static_cast<int64_t>(points.back().size_bytes) << " B), within " << 100 * worst
        << "% of those medians";
    return WindowFit{p, why.str(), true};
  };
  if (around_bytes > 0)
    if (auto f = secant_alpha_beta(curve, bus_factor, around_bytes)) return f;
  if (auto f = fit_on(kBandwidthRegimeBytes, 1e300, ">= 1 MiB")) return f;
  const json& ab = group.contains("alpha_beta") ? group["alpha_beta"] : json();
  if (ab.is_object() && ab.contains("alpha_us") && ab["alpha_us"].is_number() &&
      ab["beta_gbps"].is_number() && ab["beta_gbps"].get<double>() > 0)
    return WindowFit{AlphaBetaParams{ab["alpha_us"].get<double>(), ab["beta_gbps"].get<double>()},
                     "its all-size alpha-beta fit (fewer than 3 sizes >= 1 MiB)", false};
  return std::nullopt;
}

std::string group_label(const json& g) {
  std::ostringstream s;
  if (g.contains("collective")) {
    s << g.value("collective", "?") << " " << g.value("dtype", "?") << " nranks=" << int_or(g, "nranks", 0)
      << " ranks_per_node=" << int_or(g, "ranks_per_node", 0) << " nnodes=" << int_or(g, "nnodes", 0);
  } else {
    s << "p2p " << g.value("pattern", "?") << " " << g.value("direction", "") << " "
      << g.value("link_class", "");
  }
  return s.str();
}

}  // namespace

std::string CommFigure::describe() const {
  std::ostringstream s;
  s << collective << " at " << nranks_asked << " GPUs: " << provenance;
  if (nranks_measured != nranks_asked) s << " (from the measured " << nranks_measured << "-rank group)";
  s << ", " << source;
  if (!interval.empty()) s << "; " << interval;
  return s.str();
}

std::vector<std::pair<double, double>> measured_curve(const json& group) {
  std::map<double, double> by_size;
  if (group.contains("points") && group["points"].is_array())
    for (const json& p : group["points"]) {
      if (!p.contains("size_bytes") || !p.contains("time_us_median")) continue;
      if (!p["size_bytes"].is_number() || !p["time_us_median"].is_number()) continue;
      const double s = p["size_bytes"].get<double>(), t = p["time_us_median"].get<double>();
      if (!(s > 0) || !(t > 0)) continue;
      auto it = by_size.find(s);
      if (it == by_size.end() || t < it->second) by_size[s] = t;
    }
  return {by_size.begin(), by_size.end()};
}

namespace {

int provenance_rank(Provenance p) { return p == Provenance::measured ? 0 : p == Provenance::interpolated ? 1 : 2; }

// "allreduce/fp32/n4/rpn4/nodes1" -> 4
int64_t nranks_of_key(const std::string& key) {
  const auto at = key.find("/n");
  return at == std::string::npos ? 0 : std::atoll(key.c_str() + at + 2);
}

// The measured group of the collective in the tier nearest in rank count (then the preferred
// dtype, then the most sizes): it gives the anchor sizes and the dtype. Null when none.
const json* nearest_group(const json& calibration, const std::string& collective, int64_t nranks, int spans_nodes,
                          const std::vector<std::string>& dtypes) {
  std::vector<const json*> candidates;
  for (const json& g : groups_of(calibration, "collectives"))
    if (g.is_object() && g.value("collective", "") == collective && int_or(g, "spans_nodes", -1) == spans_nodes &&
        int_or(g, "nranks", 0) >= 2 && measured_curve(g).size() >= 2)
      candidates.push_back(&g);
  if (candidates.empty() || nranks < 2) return nullptr;
  auto dtype_rank = [&](const json& g) {
    const auto it = std::find(dtypes.begin(), dtypes.end(), g.value("dtype", ""));
    return static_cast<std::size_t>(it - dtypes.begin());
  };
  std::sort(candidates.begin(), candidates.end(), [&](const json* a, const json* b) {
    const auto key = [&](const json& g) {
      return std::make_tuple(std::llabs(int_or(g, "nranks", 0) - nranks), -int_or(g, "nranks", 0), dtype_rank(g),
                             -static_cast<int64_t>(measured_curve(g).size()));
    };
    return key(*a) < key(*b);
  });
  return candidates.front();
}

// The query for nranks in the tier: within a node all on one; across nodes at the asked (else
// the nearest group's) ranks per node, on at least 2 nodes.
CommQuery tier_query(const std::string& collective, int64_t nranks, const std::string& dtype, int spans_nodes,
                     int64_t ranks_per_node, const json& near) {
  CommQuery q{.collective = collective, .nranks = nranks, .dtype = dtype};
  if (spans_nodes == 0) {
    q.nnodes = 1;
    q.ranks_per_node = nranks;
  } else {
    q.ranks_per_node = ranks_per_node > 0 ? ranks_per_node : int_or(near, "ranks_per_node", 1);
    q.nnodes = std::max<int64_t>(2, (nranks + q.ranks_per_node - 1) / q.ranks_per_node);
    q.ranks_per_node = (nranks + q.nnodes - 1) / q.nnodes;
  }
  return q;
}

// How far one alpha-beta is from the measured medians >= 1 MiB of that group (the tool's error
// at the other sizes); "" when none.
std::string alpha_beta_error(const std::vector<std::pair<double, double>>& curve, const CommFigure& f) {
  double worst_err = 0;
  int counted = 0;
  for (const auto& [size, t] : curve)
    if (size >= kBandwidthRegimeBytes) {
      worst_err = std::max(worst_err, std::abs((f.alpha_us + size * f.bus_factor / (f.busbw_gbps * 1e3)) / t - 1));
      ++counted;
    }
  if (!counted) return "";
  std::ostringstream out;
  out << "; within " << std::setprecision(3) << 100 * worst_err << "% of its " << counted
      << " measured medians >= 1 MiB";
  return out.str();
}

// "90% interval of the model's time: at S1 B lo..hi us, at S2 B lo..hi us (rule)"; "" when the
// predictions have none.
std::string interval_text(const std::vector<std::pair<double, CommPrediction>>& at) {
  std::ostringstream out;
  out << std::setprecision(4) << "90% interval of the model's time:";
  for (const auto& [size, p] : at) {
    if (!p.has_interval) return "";
    out << " at " << static_cast<int64_t>(size) << " B " << p.lo_us << ".." << p.hi_us << " us ("
        << p.interval_rule << ")" << (&p == &at.back().second ? "" : ";");
  }
  return out.str();
}

}  // namespace

std::optional<CommFigure> collective_figure(const json& calibration, const std::string& collective,
                                            int64_t nranks, int spans_nodes, double around_bytes,
                                            const std::vector<std::string>& dtypes, int64_t ranks_per_node) {
  const json* nearest = nearest_group(calibration, collective, nranks, spans_nodes, dtypes);
  if (!nearest) return std::nullopt;
  const json& near = *nearest;
  const std::string dtype = near.value("dtype", "");
  const auto curve = measured_curve(near);
  // Anchors: S2 = comm_bytes when given, else the largest measured size (the bandwidth end a
  // training step's collectives are at); S1 = the measured size below S2 (S2 / 2 when none).
  const double s2 = around_bytes > 0 ? around_bytes : curve.back().first;
  double s1 = s2 / 2;
  for (const auto& point : curve)
    if (point.first < s2 * (1 - 1e-9)) s1 = point.first;
  CommQuery q = tier_query(collective, nranks, dtype, spans_nodes, ranks_per_node, near);
  CommPrediction p1, p2;
  try {
    const CommModel model(calibration);
    q.size_bytes = s1;
    p1 = model.predict(q);
    q.size_bytes = s2;
    p2 = model.predict(q);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  const double bus_factor = p2.busbw_gbps / p2.algbw_gbps;
  const double slope_us_per_byte = (p2.time_us - p1.time_us) / (s2 - s1);
  CommFigure f;
  f.collective = collective;
  f.nranks_asked = nranks;
  f.bus_factor = bus_factor;
  f.bandwidth_regime = s1 >= kBandwidthRegimeBytes;
  const Provenance worst =
      provenance_rank(p1.provenance) > provenance_rank(p2.provenance) ? p1.provenance : p2.provenance;
  f.provenance = to_string(worst);
  f.nranks_measured = nranks_of_key(p2.groups.empty() ? "" : p2.groups.front());
  std::ostringstream why;
  why << "alpha-beta through the communication model's times at " << static_cast<int64_t>(s1) << " and "
      << static_cast<int64_t>(s2) << " B" << (around_bytes > 0 ? " (comm_bytes)" : " (the largest measured sizes)");
  f.alpha_us = p2.time_us - s2 * slope_us_per_byte;
  f.busbw_gbps = slope_us_per_byte > 0 ? bus_factor / (slope_us_per_byte * 1e3) : 0;
  if (!(slope_us_per_byte > 0) || f.alpha_us < 0) {
    // Bus bandwidth falling with size (a host whose buffers leave the caches): alpha 0 and the
    // bandwidth at S2, still exact there.
    f.alpha_us = 0;
    f.busbw_gbps = p2.busbw_gbps;
    why << ", whose intercept is negative: alpha 0 and the bus bandwidth at " << static_cast<int64_t>(s2) << " B";
  }
  why << "; " << p2.method << " [" << to_string(p2.provenance) << ", form " << p2.form << ", groups";
  for (const auto& g : p2.groups) why << " " << g;
  why << "]";
  if (int_or(near, "nranks", 0) == nranks) why << alpha_beta_error(curve, f);
  f.source = why.str();
  f.interval = interval_text({{s1, p1}, {s2, p2}});
  f.group = json{{"collective", collective}, {"dtype", dtype},         {"nranks", nranks},
                 {"nnodes", q.nnodes},       {"ranks_per_node", q.ranks_per_node}, {"spans_nodes", spans_nodes}};
  return f;
}

std::optional<CommFigure> p2p_figure(const json& calibration, int spans_nodes, double around_bytes) {
  const json* best = nullptr;
  auto preference = [](const json& g) {
    const std::string p = g.value("pattern", "");
    return p == "sendrecv" ? 2 : p == "pingpong" ? 1 : 0;
  };
  for (const json& g : groups_of(calibration, "p2p")) {
    if (!g.is_object() || int_or(g, "spans_nodes", -1) != spans_nodes || preference(g) == 0) continue;
    if (!best || preference(g) > preference(*best)) best = &g;
  }
  if (!best) return std::nullopt;
  const auto fit = window_alpha_beta(*best, 1.0, around_bytes);
  if (!fit) return std::nullopt;
  const bool round_trip = best->value("pattern", "") == "pingpong";
  CommFigure f;
  f.collective = best->value("pattern", "");
  f.nranks_asked = f.nranks_measured = 2;
  f.alpha_us = std::max(0.0, fit->params.alpha_us) / (round_trip ? 2 : 1);
  f.busbw_gbps = fit->params.beta_gbps * (round_trip ? 2 : 1);
  f.bandwidth_regime = fit->bandwidth_regime;
  f.provenance = "measured";
  f.source = group_label(*best) + ", " + fit->why + (round_trip ? ", round trips halved" : "");
  const json& interval = best->contains("interval") ? (*best)["interval"] : json();
  if (interval.is_object() && interval.value("computed", false)) {
    std::ostringstream text;
    text << std::setprecision(3) << "90% interval of the group's " << interval.value("form", std::string("?"))
         << " form between measured sizes: x/" << std::exp(interval["quantile_log"].get<double>())
         << " at one reference gap (comm_interval.h's rule)";
    f.interval = text.str();
  }
  f.group = *best;
  return f;
}

std::optional<int64_t> measured_gpus_per_node(const json& calibration) {
  int64_t best = 0;
  for (const json& g : groups_of(calibration, "collectives"))
    if (g.is_object() && int_or(g, "spans_nodes", -1) == 0)
      best = std::max(best, int_or(g, "ranks_per_node", 0));
  if (best < 2) return std::nullopt;
  return best;
}

std::optional<InterNodeShape> measured_inter_node(const json& calibration) {
  std::optional<InterNodeShape> best;
  for (const json& g : groups_of(calibration, "collectives")) {
    if (!g.is_object() || int_or(g, "spans_nodes", -1) != 1) continue;
    const InterNodeShape s{int_or(g, "nranks", 0), int_or(g, "nnodes", 0), int_or(g, "ranks_per_node", 0)};
    if (s.nnodes < 2 || s.nranks < 2) continue;
    if (!best || s.nranks > best->nranks) best = s;
  }
  return best;
}

}  // namespace gpucal::calibration
