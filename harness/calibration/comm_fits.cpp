#include "comm_fits.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "fit.h"
#include "holdout.h"

namespace gpucal::calibration {

namespace {

using nlohmann::json;

json heldout_json(const HeldOutError& h) {
  json j{{"computed", h.computed}, {"fit_points", h.fit_points}, {"heldout_points", h.heldout_points}};
  if (h.computed) {
    j["mape_pct"] = h.mape_pct;
    j["max_abs_rel_err_pct"] = h.max_abs_rel_err_pct;
    j["heldout_sizes_bytes"] = h.heldout_sizes_bytes;
  } else {
    j["reason"] = h.reason_not_computed;
  }
  return j;
}

std::size_t distinct_sizes(const std::vector<SizeTimePoint>& points) {
  std::set<double> sizes;
  for (const auto& p : points) sizes.insert(p.size_bytes);
  return sizes.size();
}

// One model form: fit on all points for the parameters, on the training split for the error.
template <class Params, class FitFn, class ToJson>
json fit_form(const std::vector<SizeTimePoint>& points, double bus_factor, int min_sizes, FitFn fit,
              ToJson to_json) {
  if (static_cast<int>(distinct_sizes(points)) < min_sizes)
    return json{{"error", "needs " + std::to_string(min_sizes) + " distinct sizes, group has " +
                              std::to_string(distinct_sizes(points))}};
  json j;
  try {
    j = to_json(fit(points, bus_factor));
  } catch (const std::exception& e) {
    return json{{"error", e.what()}};
  }
  // Held-out fit needs min_sizes distinct sizes among the training points (held-out ones excluded).
  j["heldout"] = heldout_json(heldout_error(
      points, min_sizes, [&](const std::vector<SizeTimePoint>& train, const std::vector<double>& sizes) {
        const Params p = fit(train, bus_factor);
        std::vector<double> predicted;
        for (double s : sizes) predicted.push_back(predict_time_us(p, s, bus_factor));
        return predicted;
      }));
  return j;
}

// Each fitted form evaluated on 64 log-spaced sizes over the measured range, as bus GB/s, so the
// plot scripts draw the fits without a second copy of the formulas.
json model_curves(const json& group, const std::vector<SizeTimePoint>& points, double bus_factor) {
  double lo = points.front().size_bytes, hi = lo;
  for (const auto& p : points) {
    lo = std::min(lo, p.size_bytes);
    hi = std::max(hi, p.size_bytes);
  }
  constexpr int kCurvePoints = 64;
  std::vector<double> sizes;
  for (int i = 0; i < kCurvePoints; ++i)
    sizes.push_back(std::exp2(std::log2(lo) + (std::log2(hi) - std::log2(lo)) * i / (kCurvePoints - 1)));
  json curves{{"size_bytes", sizes}};
  auto busbw = [&](double size, double time_us) { return size * bus_factor / (time_us * 1e3); };
  auto add = [&](const char* name, auto predict) {
    std::vector<double> values;
    for (double s : sizes) values.push_back(busbw(s, predict(s)));
    curves[std::string(name) + "_busbw_gbps"] = values;
  };
  const json& ab = group["alpha_beta"];
  if (ab.contains("alpha_us"))
    add("alpha_beta", [&](double s) {
      return predict_time_us(AlphaBetaParams{ab["alpha_us"], ab["beta_gbps"]}, s, bus_factor);
    });
  const json& sg = group["sigmoid"];
  if (sg.contains("H_gbps"))
    add("sigmoid", [&](double s) {
      return predict_time_us(SigmoidParams{sg["H_gbps"], sg["k_per_log2_byte"], sg["x0_log2_bytes"], sg["y0_gbps"]}, s,
                             bus_factor);
    });
  const json& pw = group["piecewise"];
  if (pw.contains("floor_us"))
    add("piecewise", [&](double s) {
      return predict_time_us(PiecewiseParams{pw["floor_us"], pw["knee_bus_bytes"], pw["sat_bus_bytes"],
                                             pw["bw_max_gbps"], pw["overhead_us"]},
                             s, bus_factor);
    });
  return curves;
}

json fit_group(json group, const std::vector<SizeTimePoint>& points, double bus_factor) {
  json measured = json::array();
  for (const auto& p : points)
    measured.push_back({{"size_bytes", p.size_bytes},
                        {"time_us_median", p.time_us},
                        {"busbw_gbps", p.size_bytes * bus_factor / (p.time_us * 1e3)}});
  group["bus_factor"] = bus_factor;
  group["points"] = measured;
  group["alpha_beta"] = fit_form<AlphaBetaParams>(
      points, bus_factor, kAlphaBetaMinSizes, fit_alpha_beta,
      [](const AlphaBetaParams& p) { return json{{"alpha_us", p.alpha_us}, {"beta_gbps", p.beta_gbps}}; });
  group["sigmoid"] = fit_form<SigmoidParams>(points, bus_factor, kSigmoidMinSizes, fit_sigmoid,
                                             [](const SigmoidParams& p) {
                                               return json{{"H_gbps", p.height_gbps},
                                                           {"k_per_log2_byte", p.steepness},
                                                           {"x0_log2_bytes", p.midpoint_log2_bytes},
                                                           {"y0_gbps", p.offset_gbps}};
                                             });
  group["piecewise"] = fit_form<PiecewiseParams>(points, bus_factor, kPiecewiseMinSizes, fit_piecewise,
                                                 [](const PiecewiseParams& p) {
                                                   return json{{"floor_us", p.floor_us},
                                                               {"knee_bus_bytes", p.knee_bus_bytes},
                                                               {"sat_bus_bytes", p.sat_bus_bytes},
                                                               {"bw_max_gbps", p.bw_max_gbps},
                                                               {"overhead_us", p.overhead_us}};
                                                 });
  group["model_curves"] = model_curves(group, points, bus_factor);
  return group;
}

json fit_collectives(const BenchResults& bench) {
  const CsvTable& t = bench.table;
  t.require_columns({"collective", "dtype", "nranks", "ranks_per_node", "nnodes", "spans_nodes",
                     "size_bytes", "bus_factor"});
  using Key = std::tuple<std::string, std::string, int64_t, int64_t, int64_t>;
  std::map<Key, std::vector<std::size_t>> groups;
  for (std::size_t r : bench.ok_rows)
    groups[{t.get_string(r, "collective"), t.get_string(r, "dtype"), t.get_int(r, "nranks"),
            t.get_int(r, "ranks_per_node"), t.get_int(r, "nnodes")}]
        .push_back(r);
  json out = json::array();
  for (const auto& [key, rows] : groups) {
    std::vector<SizeTimePoint> points;
    for (std::size_t r : rows) points.push_back({t.get_double(r, "size_bytes"), t.get_double(r, "time_us_median")});
    const double bus_factor = t.get_double(rows.front(), "bus_factor");
    const auto& [collective, dtype, nranks, ranks_per_node, nnodes] = key;
    out.push_back(fit_group({{"collective", collective},
                             {"dtype", dtype},
                             {"nranks", nranks},
                             {"ranks_per_node", ranks_per_node},
                             {"nnodes", nnodes},
                             {"spans_nodes", t.get_int(rows.front(), "spans_nodes")}},
                            points, bus_factor));
  }
  return out;
}

json fit_p2p(const BenchResults& bench) {
  const CsvTable& t = bench.table;
  t.require_columns({"pattern", "direction", "link_class", "src_node", "dst_node", "size_bytes"});
  using Key = std::tuple<std::string, std::string, std::string, int>;
  std::map<Key, std::vector<std::size_t>> groups;
  for (std::size_t r : bench.ok_rows) {
    if (t.get_string(r, "pattern") == "copy") continue;  // memory bandwidth, see compute_tables
    const int spans_nodes = t.get_string(r, "src_node") != t.get_string(r, "dst_node") ? 1 : 0;
    groups[{t.get_string(r, "pattern"), t.get_string(r, "direction"), t.get_string(r, "link_class"), spans_nodes}]
        .push_back(r);
  }
  json out = json::array();
  for (const auto& [key, rows] : groups) {
    std::vector<SizeTimePoint> points;
    for (std::size_t r : rows) points.push_back({t.get_double(r, "size_bytes"), t.get_double(r, "time_us_median")});
    const auto& [pattern, direction, link_class, spans_nodes] = key;
    out.push_back(fit_group({{"pattern", pattern},
                             {"direction", direction},
                             {"link_class", link_class},
                             {"spans_nodes", spans_nodes}},
                            points, 1.0));
  }
  return out;
}

}  // namespace

json fit_communication(const ResultsDir& results) {
  json out{{"collectives", json::array()}, {"p2p", json::array()}};
  if (const BenchResults* b = results.find("collectives")) out["collectives"] = fit_collectives(*b);
  if (const BenchResults* b = results.find("p2p")) out["p2p"] = fit_p2p(*b);
  return out;
}

}  // namespace gpucal::calibration
