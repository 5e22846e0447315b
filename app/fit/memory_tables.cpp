#include "app/fit/memory_tables.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "app/common/median.h"
#include "app/fit/compute_tables.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

std::string place(const std::vector<CacheLevelFact>& sorted_levels, double working_set) {
  for (const auto& c : sorted_levels)
    if (working_set <= c.bytes) return c.name;
  return "memory";
}

// bench_p2p's device-to-device copies: best bandwidth per size and its step table.
json d2d_copy_table(const BenchResults& p2p) {
  const CsvTable& t = p2p.table;
  t.require_columns({"pattern", "direction", "size_bytes", "bandwidth_gbps"});
  std::map<double, double> best_by_size;  // size -> best bandwidth over repeats/devices
  for (std::size_t r : p2p.ok_rows) {
    if (t.get_string(r, "pattern") != "copy" || t.get_string(r, "direction").find("d2d") == std::string::npos) continue;
    const double size = t.get_double(r, "size_bytes");
    best_by_size[size] = std::max(best_by_size[size], t.get_double(r, "bandwidth_gbps"));
  }
  if (best_by_size.empty()) return nullptr;
  double best = 0;
  for (const auto& [size, bw] : best_by_size) best = std::max(best, bw);
  json points = json::array();
  StepTable mb_eff;  // thresholds are the measured sizes, in MB (1e6 B) as Calculon reads them
  for (auto it = best_by_size.rbegin(); it != best_by_size.rend(); ++it) {
    mb_eff.emplace_back(it->first / 1e6, it->second / best);
    points.push_back({{"size_bytes", it->first}, {"bandwidth_gbps", it->second}, {"efficiency", it->second / best}});
  }
  std::reverse(points.begin(), points.end());
  return {{"best_gbps", best}, {"efficiency_reference", "best_gbps"}, {"MB_efficiency", step_table_json(mb_eff)},
          {"by_size", points}};
}

std::vector<CacheLevelFact> cache_facts(const json& sidecar) {
  std::vector<CacheLevelFact> levels;
  if (sidecar.is_object() && sidecar.contains("cache_levels") && sidecar["cache_levels"].is_array())
    for (const auto& c : sidecar["cache_levels"])
      if (c.is_object() && c.contains("name") && c.contains("bytes") && c["bytes"].is_number())
        levels.push_back({c["name"].get<std::string>(), c["bytes"].get<double>()});
  return levels;
}

json plateau_json(const Plateau& p) {
  return {{"level", p.level},
          {"level_bytes", p.level_bytes > 0 ? json(p.level_bytes) : json(nullptr)},
          {"bandwidth_gbps", p.bandwidth_gbps},
          {"working_set_min_bytes", p.working_set_min},
          {"working_set_max_bytes", p.working_set_max},
          {"points", p.points}};
}

// Rows of the preferred regime: hot when present (STREAM's figure), else all.
std::vector<std::size_t> hot_first(const CsvTable& t, const std::vector<std::size_t>& rows) {
  std::vector<std::size_t> hot;
  for (std::size_t r : rows)
    if (t.get_string(r, "regime") == "hot") hot.push_back(r);
  return hot.empty() ? rows : hot;
}

}  // namespace

std::vector<Plateau> detect_plateaus(std::vector<std::pair<double, double>> points,
                                     const std::vector<CacheLevelFact>& levels, double tolerance) {
  std::sort(points.begin(), points.end());
  std::vector<CacheLevelFact> sorted = levels;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  std::vector<Plateau> out;
  auto flat = [&](std::size_t lo, std::size_t hi) {  // [lo, hi] within tolerance of their median
    std::vector<double> v;
    for (std::size_t k = lo; k <= hi; ++k) v.push_back(points[k].second);
    const double m = median_of(v);
    for (double x : v)
      if (std::fabs(x - m) > tolerance * m) return false;
    return true;
  };
  for (std::size_t i = 0; i < points.size();) {
    std::size_t j = i;
    while (j + 1 < points.size() && flat(i, j + 1)) ++j;
    if (j == i) {  // a point of a transition
      ++i;
      continue;
    }
    Plateau p;
    std::vector<double> bw;
    std::map<std::string, int> votes;
    for (std::size_t k = i; k <= j; ++k) {
      bw.push_back(points[k].second);
      ++votes[place(sorted, points[k].first)];
    }
    p.working_set_min = points[i].first;
    p.working_set_max = points[j].first;
    p.bandwidth_gbps = median_of(bw);
    p.points = static_cast<int>(j - i + 1);
    // The majority level; a tie goes to the larger level (the stretch runs into it).
    int best = -1;
    for (const auto& c : sorted)
      if (votes.count(c.name) && votes[c.name] >= best) best = votes[c.name], p.level = c.name, p.level_bytes = c.bytes;
    if (votes.count("memory") && votes["memory"] >= best) p.level = "memory", p.level_bytes = 0;
    out.push_back(p);
    i = j + 1;
  }
  return out;
}

namespace {

// bench_memory's ok rows by family: STREAM curves per (kernel, dtype, impl), fma_chain rows, op rows.
using CurveKey = std::tuple<std::string, std::string, std::string>;
struct MemoryRows {
  std::map<CurveKey, std::vector<std::size_t>> curves;
  std::vector<std::size_t> vector_rows, op_rows;
};

MemoryRows split_by_family(const CsvTable& t, const std::vector<std::size_t>& ok_rows) {
  MemoryRows out;
  for (std::size_t r : ok_rows) {
    const std::string family = t.get_string(r, "family");
    if (family == "stream")
      out.curves[{t.get_string(r, "kernel"), t.get_string(r, "dtype"), t.get_string(r, "impl")}].push_back(r);
    else if (family == "vector")
      out.vector_rows.push_back(r);
    else
      out.op_rows.push_back(r);
  }
  return out;
}

// A figure for the device's bandwidth from one of copy's curves.
struct TableCandidate {
  bool fp32;
  double gbps;
  std::string source;
  std::vector<std::pair<double, double>> curve;  // (bytes moved, GB/s)
};

// The best row per working set of a curve.
std::map<double, std::size_t> best_by_working_set(const CsvTable& t, const std::vector<std::size_t>& rows) {
  std::map<double, std::size_t> best;
  for (std::size_t r : rows) {
    const double ws = t.get_double(r, "working_set_bytes");
    auto it = best.find(ws);
    if (it == best.end() || t.get_double(r, "bandwidth_gbps") > t.get_double(it->second, "bandwidth_gbps")) best[ws] = r;
  }
  return best;
}

// The longest stretch of each level (the faster one between equals).
std::map<std::string, Plateau> longest_per_level(const std::vector<Plateau>& stretches) {
  std::map<std::string, Plateau> per_level;
  for (const Plateau& p : stretches) {
    auto it = per_level.find(p.level);
    if (it == per_level.end() || p.points > it->second.points ||
        (p.points == it->second.points && p.bandwidth_gbps > it->second.bandwidth_gbps))
      per_level[p.level] = p;
  }
  return per_level;
}

// Without a memory plateau (fewer than 2 flat points beyond the caches), copy's points at
// >= 4x the last-level cache stand in, as bench_memory's own fraction_of_copy does.
std::optional<TableCandidate> copy_beyond_last_cache(const CurveKey& key, const std::vector<std::pair<double, double>>& xy,
                                                const std::vector<CacheLevelFact>& levels) {
  const auto& [kernel, dtype, impl] = key;
  double llc = 0;
  for (const auto& c : levels) llc = std::max(llc, c.bytes);
  if (kernel != "copy" || llc <= 0) return std::nullopt;
  std::vector<double> beyond;
  for (const auto& [ws, gbps] : xy)
    if (ws >= 4 * llc) beyond.push_back(gbps);
  if (beyond.empty()) return std::nullopt;
  return TableCandidate{dtype == "fp32", median_of(beyond),
                   "bench_memory copy " + dtype + " " + impl + " median of " + std::to_string(beyond.size()) +
                       " point(s) >= 4x the last-level cache",
                   xy};
}

// One STREAM curve (hot rows preferred): its best point per working set and its flat stretches;
// the longest stretch of each level goes to `plateaus`, copy's memory figures to `candidates`.
json stream_curve(const CsvTable& t, const CurveKey& key, const std::vector<std::size_t>& all_rows,
                  const std::vector<CacheLevelFact>& levels, json& plateaus, std::vector<TableCandidate>& candidates) {
  const auto& [kernel, dtype, impl] = key;
  const auto rows = hot_first(t, all_rows);
  json pts = json::array();
  std::vector<std::pair<double, double>> xy;
  for (const auto& [ws, r] : best_by_working_set(t, rows)) {
    xy.emplace_back(ws, t.get_double(r, "bandwidth_gbps"));
    pts.push_back({{"working_set_bytes", ws}, {"bandwidth_gbps", xy.back().second}, {"point", t.get_string(r, "point")}});
  }
  const auto stretches = detect_plateaus(xy, levels);
  json stretch_json = json::array();
  for (const Plateau& p : stretches) stretch_json.push_back(plateau_json(p));
  const std::map<std::string, Plateau> per_level = longest_per_level(stretches);
  if (!per_level.count("memory"))
    if (auto c = copy_beyond_last_cache(key, xy, levels)) candidates.push_back(*c);
  for (const auto& [level, p] : per_level) {
    json row = plateau_json(p);
    row["kernel"] = kernel, row["dtype"] = dtype, row["impl"] = impl;
    plateaus.push_back(row);
    if (kernel == "copy" && level == "memory")
      candidates.push_back({dtype == "fp32", p.bandwidth_gbps,
                            "bench_memory copy " + dtype + " " + impl + " memory plateau (median of " +
                                std::to_string(p.points) + " points)",
                            xy});
  }
  return {{"kernel", kernel}, {"dtype", dtype}, {"impl", impl}, {"regime", t.get_string(rows.front(), "regime")},
          {"points", pts}, {"stretches", stretch_json}};
}

json stream_table(const CsvTable& t, const MemoryRows& rows, const std::vector<CacheLevelFact>& levels,
                  std::vector<TableCandidate>& candidates, std::vector<std::string>& missing) {
  json levels_json = json::array();
  for (const auto& c : levels) levels_json.push_back({{"name", c.name}, {"bytes", c.bytes}});
  json curves_json = json::array(), plateaus_json = json::array();
  for (const auto& [key, all_rows] : rows.curves)
    curves_json.push_back(stream_curve(t, key, all_rows, levels, plateaus_json, candidates));
  if (levels.empty()) missing.push_back("memory.stream levels: no cache_levels in memory.json: every stretch reads memory");
  if (rows.curves.empty()) missing.push_back("memory.stream: no ok STREAM rows in memory.csv");
  return {{"cache_levels", levels_json}, {"curves", curves_json}, {"plateaus", plateaus_json},
          {"plateau_rule", "consecutive points within 15% of their median, at least 2; level = where most "
                           "of its working sets fit (memory: beyond the last cache)"}};
}

// The device's bandwidth: copy's memory plateau, fp32 preferred, the fastest implementation;
// else the best p2p d2d copy. Written into `out`; returns it (0: none).
double device_bandwidth(json& out, const std::vector<TableCandidate>& candidates, const json& d2d,
                        std::vector<std::string>& missing) {
  double device_bw = 0;
  std::string device_source;
  const bool any_fp32 = std::any_of(candidates.begin(), candidates.end(), [](const auto& c) { return c.fp32; });
  const TableCandidate* chosen = nullptr;
  for (const auto& c : candidates)
    if (c.fp32 == any_fp32 && c.gbps > device_bw) device_bw = c.gbps, device_source = c.source, chosen = &c;
  if (device_bw > 0) {
    out["device_bandwidth_gbps"] = device_bw;
    out["device_bandwidth_source"] = device_source;
    // Calculon's mem MB_efficiency: that copy curve by MB moved (a copy's working set is
    // what it moves), bandwidth / device bandwidth, capped at 1 (caches are not in its model).
    StepTable steps;
    for (auto it = chosen->curve.rbegin(); it != chosen->curve.rend(); ++it)
      steps.emplace_back(it->first / 1e6, std::min(1.0, it->second / device_bw));
    out["copy_MB_efficiency"] = step_table_json(steps);
  } else if (!d2d.is_null()) {
    out["device_bandwidth_gbps"] = d2d["best_gbps"];
    out["device_bandwidth_source"] = "p2p d2d copy (best; no bench_memory copy memory plateau)";
  } else {
    missing.push_back("memory.device_bandwidth_gbps: no copy plateau beyond the last cache level (sweep --bytes past "
                      "4x the last-level cache)");
  }
  return device_bw;
}

// Vector throughput per dtype: the best fma_chain row at or below its peak.
json vector_table(const CsvTable& t, const std::vector<std::size_t>& vector_rows) {
  json vec = json::object();
  std::map<std::string, std::size_t> best_vec;
  for (std::size_t r : vector_rows) {
    const auto peak = t.get_optional_double(r, "peak_tflops");
    const double tflops = t.get_double(r, "tflops");
    if (peak && *peak > 0 && tflops > *peak) continue;  // above peak: never a result
    const std::string dtype = t.get_string(r, "dtype");
    auto it = best_vec.find(dtype);
    if (it == best_vec.end() || tflops > t.get_double(it->second, "tflops")) best_vec[dtype] = r;
  }
  for (const auto& [dtype, r] : best_vec) {
    const auto peak = t.get_optional_double(r, "peak_tflops");
    const double tflops = t.get_double(r, "tflops");
    const bool has_peak = peak && *peak > 0;
    vec[dtype] = {{"best_tflops", tflops},
                  {"peak_tflops", has_peak ? json(*peak) : json(nullptr)},
                  {"efficiency", has_peak ? json(tflops / *peak) : json(nullptr)},
                  {"peak_source", t.get_string_or(r, "peak_source", "")},
                  {"point", t.get_string(r, "point")}};
  }
  return vec;
}

// Ops: bandwidth by bytes moved, efficiency against the device bandwidth.
json ops_table(const CsvTable& t, const std::vector<std::size_t>& op_rows, double device_bw) {
  json ops = json::object();
  std::map<std::pair<std::string, std::string>, std::map<double, std::size_t>> by_op;
  for (std::size_t r : hot_first(t, op_rows)) {
    auto& m = by_op[{t.get_string(r, "kernel"), t.get_string(r, "dtype")}];
    const double bytes = t.get_double(r, "bytes");
    auto it = m.find(bytes);
    if (it == m.end() || t.get_double(r, "bandwidth_gbps") > t.get_double(it->second, "bandwidth_gbps")) m[bytes] = r;
  }
  for (const auto& [key, by_bytes] : by_op) {
    json entries = json::array();
    StepTable mb_eff;
    for (const auto& [bytes, r] : by_bytes) {
      const double gbps = t.get_double(r, "bandwidth_gbps");
      json e{{"bytes", bytes},
             {"bandwidth_gbps", gbps},
             {"efficiency", device_bw > 0 ? json(gbps / device_bw) : json(nullptr)},
             {"time_us_median", t.get_double(r, "time_us_median")},
             {"impl", t.get_string(r, "impl")},
             {"point", t.get_string(r, "point")}};
      for (const char* c : {"rows", "cols", "params"})
        if (const auto v = t.get_optional_double(r, c)) e[c] = *v;
      entries.push_back(e);
    }
    if (device_bw > 0) {
      for (auto it = by_bytes.rbegin(); it != by_bytes.rend(); ++it)
        mb_eff.emplace_back(it->first / 1e6, t.get_double(it->second, "bandwidth_gbps") / device_bw);
    }
    ops[key.first][key.second] = {{"by_bytes", entries},
                                  {"MB_efficiency", device_bw > 0 ? step_table_json(mb_eff) : json(nullptr)},
                                  {"efficiency_reference", "device_bandwidth_gbps"}};
  }
  return ops;
}

// Without bench_memory rows: the p2p d2d copy alone, or nothing.
json without_memory_rows(json out, const json& d2d, std::vector<std::string>& missing) {
  missing.push_back("memory.stream, memory.vector, memory.ops: no ok rows in memory.csv");
  if (!d2d.is_null()) {
    out["device_bandwidth_gbps"] = d2d["best_gbps"];
    out["device_bandwidth_source"] = "p2p d2d copy (best; no bench_memory copy plateau)";
  } else {
    missing.push_back("memory.device_bandwidth_gbps: no bench_memory copy plateau and no p2p d2d copy rows");
  }
  return out.empty() ? json(nullptr) : out;
}

}  // namespace

json memory_section(const BenchResults* p2p, const BenchResults* memory, std::vector<std::string>& missing) {
  json out = json::object();
  json d2d = p2p ? d2d_copy_table(*p2p) : json(nullptr);
  if (!d2d.is_null()) out["d2d_copy"] = d2d;
  if (!memory || memory->ok_rows.empty()) return without_memory_rows(out, d2d, missing);
  const CsvTable& t = memory->table;
  t.require_columns({"kernel", "family", "dtype", "impl", "working_set_bytes", "bytes", "bandwidth_gbps"});
  const std::vector<CacheLevelFact> levels = cache_facts(memory->sidecar);
  const MemoryRows rows = split_by_family(t, memory->ok_rows);
  std::vector<TableCandidate> device_candidates;  // copy's memory plateaus
  out["stream"] = stream_table(t, rows, levels, device_candidates, missing);
  const double device_bw = device_bandwidth(out, device_candidates, d2d, missing);
  out["vector"] = vector_table(t, rows.vector_rows);
  if (out["vector"].empty()) missing.push_back("memory.vector: no ok fma_chain rows in memory.csv");
  out["ops"] = ops_table(t, rows.op_rows, device_bw);
  if (out["ops"].empty()) missing.push_back("memory.ops: no ok op rows in memory.csv");
  return out;
}

}  // namespace gpucal::calibration
