#include "app/fit/compute_tables.h"

#include "app/common/median.h"
#include "app/fit/gemm_surface.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <tuple>

namespace gpucal::calibration {

using nlohmann::json;

namespace {

// Rows of the preferred regime: 'cold' when present (what a step in a training loop sees
// after other kernels evicted L2), else all ok rows.
std::pair<std::vector<std::size_t>, std::string> regime_rows(const BenchResults& b,
                                                             const std::vector<std::size_t>& rows) {
  std::vector<std::size_t> cold;
  for (std::size_t r : rows)
    if (b.table.get_string(r, "regime") == "cold") cold.push_back(r);
  if (!cold.empty()) return {cold, "cold"};
  return {rows, rows.empty() ? "" : b.table.get_string(rows.front(), "regime")};
}

// Efficiency of a row against its recorded peak; nullopt when no peak was recorded.
std::optional<double> row_efficiency(const CsvTable& t, std::size_t r) {
  const auto peak = t.get_optional_double(r, "peak_tflops");
  if (!peak || !(*peak > 0)) return std::nullopt;
  return t.get_double(r, "tflops") / *peak;
}

// Drops rows whose throughput exceeds their recorded peak (a measurement error, not a result).
std::vector<std::size_t> plausible_rows(const BenchResults& b, std::vector<std::string>& warnings) {
  std::vector<std::size_t> kept;
  for (std::size_t r : b.ok_rows) {
    const auto eff = row_efficiency(b.table, r);
    if (eff && *eff > 1.0) {
      warnings.push_back(b.table.source() + ": point " + b.table.get_string(r, "point") +
                         " excluded: tflops above peak_tflops (efficiency " + std::to_string(*eff) + ")");
      continue;
    }
    kept.push_back(r);
  }
  return kept;
}

}  // namespace

json step_table_json(const StepTable& table) {
  json j = json::array();
  for (const auto& [x, eff] : table) j.push_back({x, eff});
  return j;
}

StepTable step_table_by_log2_bucket(const std::vector<std::pair<double, double>>& x_eff) {
  std::map<int, std::vector<double>> buckets;
  for (const auto& [x, eff] : x_eff)
    if (x > 0) buckets[static_cast<int>(std::floor(std::log2(x)))].push_back(eff);
  StepTable table;
  for (auto it = buckets.rbegin(); it != buckets.rend(); ++it)
    table.emplace_back(std::exp2(it->first), median_of(it->second));
  return table;
}

std::optional<double> step_lookup(const StepTable& table, double x) {
  for (const auto& [threshold, eff] : table)
    if (x >= threshold) return eff;
  return std::nullopt;
}

json gemm_tables(const BenchResults& gemm, std::vector<std::string>& warnings) {
  const CsvTable& t = gemm.table;
  t.require_columns({"dtype", "m", "n", "k", "batch", "flops", "tflops", "peak_tflops"});
  std::map<std::string, std::vector<std::size_t>> by_dtype;
  for (std::size_t r : plausible_rows(gemm, warnings)) by_dtype[t.get_string(r, "dtype")].push_back(r);
  json out = json::object();
  for (const auto& [dtype, all_rows] : by_dtype) {
    const auto [rows, regime] = regime_rows(gemm, all_rows);
    std::size_t best = rows.front();
    double peak = 0;
    for (std::size_t r : rows) {
      if (t.get_double(r, "tflops") > t.get_double(best, "tflops")) best = r;
      peak = std::max(peak, t.get_optional_double(r, "peak_tflops").value_or(0.0));
    }
    const double best_tflops = t.get_double(best, "tflops");
    // Reference for efficiencies: the recorded peak when there is one, else the best achieved.
    const double reference = peak > 0 ? peak : best_tflops;
    // Best implementation/layout per shape: what a tuned framework reaches for that shape.
    using Shape = std::tuple<int64_t, int64_t, int64_t, int64_t>;
    std::map<Shape, std::size_t> best_per_shape;
    for (std::size_t r : rows) {
      const Shape s{t.get_int(r, "m"), t.get_int(r, "n"), t.get_int(r, "k"), t.get_int(r, "batch")};
      auto it = best_per_shape.find(s);
      if (it == best_per_shape.end() || t.get_double(r, "tflops") > t.get_double(it->second, "tflops"))
        best_per_shape[s] = r;
    }
    json shapes = json::array();
    std::vector<std::pair<double, double>> gflop_eff;
    std::vector<GemmSample> samples;
    for (const auto& [shape, r] : best_per_shape) {
      const double eff = t.get_double(r, "tflops") / reference;
      const double gflop = t.get_double(r, "flops") / 1e9;
      gflop_eff.emplace_back(gflop, eff);
      samples.push_back({static_cast<double>(std::max<int64_t>(1, std::get<3>(shape))),
                         static_cast<double>(std::get<0>(shape)), static_cast<double>(std::get<1>(shape)),
                         static_cast<double>(std::get<2>(shape)), t.get_double(r, "tflops")});
      shapes.push_back({{"m", std::get<0>(shape)},
                        {"n", std::get<1>(shape)},
                        {"k", std::get<2>(shape)},
                        {"batch", std::get<3>(shape)},
                        {"gflop", gflop},
                        {"tflops", t.get_double(r, "tflops")},
                        {"efficiency", eff},
                        {"point", t.get_string(r, "point")}});
    }
    std::set<std::string> accumulations;
    if (dtype.rfind("fp8", 0) == 0)
      for (const auto& [shape, r] : best_per_shape)
        accumulations.insert(fp8_accumulation_of(t.get_string(r, "impl"), t.get_string_or(r, "backend", ""),
                                                 t.get_string_or(r, "device", "")));
    out[dtype] = {{"best_tflops", best_tflops},
                  {"best_point", t.get_string(best, "point")},
                  {"peak_tflops", peak > 0 ? json(peak) : json(nullptr)},
                  {"efficiency_reference", peak > 0 ? "peak_tflops" : "best_tflops"},
                  {"reference_tflops", reference},
                  {"regime", regime},
                  {"gflops_efficiency", step_table_json(step_table_by_log2_bucket(gflop_eff))},
                  {"by_shape", shapes},
                  {"heldout", gemm_holdout_scores(samples)}};
    if (accumulations.size() == 1 && !accumulations.begin()->empty())
      out[dtype]["accumulation"] = *accumulations.begin();
  }
  return out;
}

std::string fp8_accumulation_of(const std::string& impl, const std::string& backend, const std::string& device) {
  static const std::regex hopper(R"((^|[^0-9A-Za-z])(H100|H200|H800|H20|GH200|sm_90)([^0-9]|$))");
  if (!std::regex_search(device, hopper)) return "";
  if (impl.rfind("xla-table", 0) == 0) return "fast";
  if (impl == "cublaslt" && backend == "cuda") return "split";
  return "";
}

json attention_tables(const BenchResults& attention, std::vector<std::string>& warnings) {
  const CsvTable& t = attention.table;
  t.require_columns({"dtype", "pass", "causal", "head_dim", "seq_q", "seq_kv", "tflops", "flop_convention"});
  using Key = std::tuple<std::string, std::string, std::string, std::string, int64_t>;
  std::map<Key, std::map<std::pair<int64_t, int64_t>, std::size_t>> groups;  // -> (seq_q, seq_kv) -> best row
  for (std::size_t r : plausible_rows(attention, warnings)) {
    const Key key{t.get_string(r, "dtype"), t.get_string(r, "pass"), t.get_string(r, "causal"),
                  t.get_string(r, "flop_convention"), t.get_int(r, "head_dim")};
    auto& by_seq = groups[key];
    const std::pair<int64_t, int64_t> seq{t.get_int(r, "seq_q"), t.get_int(r, "seq_kv")};
    auto it = by_seq.find(seq);
    if (it == by_seq.end() || t.get_double(r, "tflops") > t.get_double(it->second, "tflops")) by_seq[seq] = r;
  }
  json out = json::array();
  for (const auto& [key, by_seq] : groups) {
    json entries = json::array();
    for (const auto& [seq, r] : by_seq) {
      const auto eff = row_efficiency(t, r);
      entries.push_back({{"seq_q", seq.first},
                         {"seq_kv", seq.second},
                         {"tflops", t.get_double(r, "tflops")},
                         {"efficiency", eff ? json(*eff) : json(nullptr)},
                         {"point", t.get_string(r, "point")}});
    }
    out.push_back({{"dtype", std::get<0>(key)},
                   {"pass", std::get<1>(key)},
                   {"causal", std::get<2>(key)},
                   {"flop_convention", std::get<3>(key)},
                   {"head_dim", std::get<4>(key)},
                   {"by_seq", entries}});
  }
  return out;
}

}  // namespace gpucal::calibration
