#include "app/report/node_metrics.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "core/registry/registry.h"

namespace gpucal::fleet {

using calibration::BenchResults;
using calibration::CsvTable;
using calibration::ResultsDir;

std::string to_string(Better b) { return b == Better::higher ? "higher" : "lower"; }

Better better_from_string(const std::string& text) {
  if (text == "higher") return Better::higher;
  if (text == "lower") return Better::lower;
  throw std::invalid_argument("'better' must be 'higher' or 'lower', got '" + text + "'");
}

Statistic statistic_from_string(const std::string& text) {
  if (text == "median") return Statistic::median;
  if (text == "best") return Statistic::best;
  throw std::invalid_argument("--statistic: expected median or best, got '" + text + "'");
}

std::string to_string(Statistic s) { return s == Statistic::median ? "median" : "best"; }

MetricKind metric_kind(const std::string& id) {
  auto ends_with = [&](const std::string& tail) {
    return id.size() > tail.size() && id.compare(id.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (ends_with("_tflops")) return {"TFLOP/s", Better::higher, true};
  if (ends_with("_latency_us")) return {"us", Better::lower, true};
  if (ends_with("_gbps") || id.find("_gbps_n") != std::string::npos) return {"GB/s", Better::higher, true};
  return {};
}

namespace {
// The fixed ids and the patterns of the numbered ones, for is_metric_id and its suggestions.
const std::vector<std::string>& fixed_metric_ids() {
  static const std::vector<std::string> ids{
      "gemm_bf16_tflops", "gemm_fp16_tflops", "gemm_fp32_tflops", "gemm_tf32_tflops", "gemm_fp64_tflops",
      "gemm_fp8_tflops",  "gemm_int8_tflops", "hbm_copy_gbps",    "p2p_bw_gbps",      "p2p_latency_us",
      "internode_bw_gbps", "internode_latency_us", "allreduce_busbw_gbps_n8", "allreduce_busbw_gbps_n2_nodes2"};
  return ids;
}
}  // namespace

int rail_of(const std::string& id) {
  static const std::regex rail(R"(rail(0|[1-9][0-9]{0,5})_bw_gbps)");
  std::smatch m;
  return std::regex_match(id, m, rail) ? std::stoi(m[1].str()) : -1;
}

bool is_metric_id(const std::string& id) {
  static const std::regex numbered(R"(allreduce_busbw_gbps_n[1-9][0-9]*(_nodes[1-9][0-9]*)?)");
  const auto& fixed = fixed_metric_ids();
  return std::find(fixed.begin(), fixed.end(), id) != fixed.end() || std::regex_match(id, numbered) || rail_of(id) >= 0;
}

void check_metric_id(const std::string& what, const std::string& id) {
  if (is_metric_id(id)) return;
  std::vector<std::string> names = fixed_metric_ids();
  names.back() = "allreduce_busbw_gbps_n<N>_nodes<M>";
  names[names.size() - 2] = "allreduce_busbw_gbps_n<N>";
  names.push_back("rail<I>_bw_gbps");
  throw std::invalid_argument(what + ": " + registry::unknown_message("metric", id, names));
}

namespace {

// Keeps, per metric id, the row with the most extreme `order` key (largest size, say) and,
// among rows tied on it, the best value.
class Picker {
 public:
  explicit Picker(Statistic statistic) : statistic_(statistic) {}
  // `value` is the row's figure at its median time; `t`, `row` give its fastest sample.
  void offer(const std::string& id, double order, double value, const CsvTable& t, std::size_t row) {
    const MetricKind kind = metric_kind(id);
    if (statistic_ == Statistic::best) {
      const auto median = t.get_optional_double(row, "time_us_median"), fastest = t.get_optional_double(row, "time_us_min");
      if (median && fastest && *fastest > 0) value = kind.better == Better::higher ? value * *median / *fastest : value * *fastest / *median;
    }
    const std::string point = t.get_string(row, "point");
    auto [it, inserted] = best_.try_emplace(id, Candidate{order, value, point});
    if (inserted) return;
    Candidate& c = it->second;
    const bool better = kind.better == Better::higher ? value > c.value : value < c.value;
    if (order > c.order || (order == c.order && better)) c = {order, value, point};
  }
  void into(MetricSet& out) const {
    for (const auto& [id, c] : best_) {
      const MetricKind kind = metric_kind(id);
      out[id] = Metric{id, c.value, kind.unit, kind.better, c.point};
    }
  }

 private:
  struct Candidate {
    double order, value;
    std::string point;
  };
  Statistic statistic_;
  std::map<std::string, Candidate> best_;
};

std::string gemm_dtype(const std::string& dtype) { return dtype.rfind("fp8", 0) == 0 ? "fp8" : dtype; }

void gemm_metrics(const BenchResults& b, Picker& pick) {
  const CsvTable& t = b.table;
  for (std::size_t r : b.ok_rows) {
    const auto m = t.get_optional_double(r, "m"), n = t.get_optional_double(r, "n"), k = t.get_optional_double(r, "k");
    const auto batch = t.get_optional_double(r, "batch"), tflops = t.get_optional_double(r, "tflops");
    if (!m || !n || !k || !tflops || *m != *n || *n != *k || (batch && *batch != 1)) continue;
    pick.offer("gemm_" + gemm_dtype(t.get_string(r, "dtype")) + "_tflops", *m, *tflops, t, r);
  }
}

void memory_metrics(const BenchResults& b, Picker& pick) {
  const CsvTable& t = b.table;
  if (!t.has_column("kernel")) return;
  for (std::size_t r : b.ok_rows) {
    const auto bytes = t.get_optional_double(r, "array_bytes"), gbps = t.get_optional_double(r, "bandwidth_gbps");
    if (t.get_string(r, "kernel") != "copy" || !bytes || !gbps) continue;
    pick.offer("hbm_copy_gbps", *bytes, *gbps, t, r);
  }
}

void collective_metrics(const BenchResults& b, Picker& pick) {
  const CsvTable& t = b.table;
  for (std::size_t r : b.ok_rows) {
    const auto n = t.get_optional_double(r, "nranks"), nodes = t.get_optional_double(r, "nnodes");
    const auto size = t.get_optional_double(r, "size_bytes"), busbw = t.get_optional_double(r, "busbw_gbps");
    if (t.get_string_or(r, "collective", "") != "allreduce" || !n || !size || !busbw) continue;
    if (t.has_column("nnodes") && !nodes) continue;  // an import whose log names no hosts: no tier to judge
    std::string id = "allreduce_busbw_gbps_n" + std::to_string(static_cast<long long>(*n));
    if (nodes && *nodes > 1) id += "_nodes" + std::to_string(static_cast<long long>(*nodes));
    pick.offer(id, *size, *busbw, t, r);
  }
}

void p2p_metrics(const BenchResults& b, Picker& pick) {
  static const std::regex rail_key(R"(/rail([0-9]+)/)");
  const CsvTable& t = b.table;
  for (std::size_t r : b.ok_rows) {
    const std::string pattern = t.get_string_or(r, "pattern", "");
    const auto size = t.get_optional_double(r, "size_bytes");
    std::smatch rail;
    const std::string point = t.get_string(r, "point");
    if (pattern == "rails" && size && std::regex_search(point, rail, rail_key)) {
      if (const auto gbps = t.get_optional_double(r, "bandwidth_gbps")) pick.offer("rail" + rail[1].str() + "_bw_gbps", *size, *gbps, t, r);
      continue;
    }
    if (!size || (pattern != "sendrecv" && pattern != "pingpong")) continue;
    const bool across = t.get_string_or(r, "src_node", "") != t.get_string_or(r, "dst_node", "");
    const std::string prefix = across ? "internode" : "p2p";
    if (pattern == "sendrecv" && t.get_string_or(r, "direction", "") == "uni") {
      if (const auto gbps = t.get_optional_double(r, "bandwidth_gbps")) pick.offer(prefix + "_bw_gbps", *size, *gbps, t, r);
    } else if (pattern == "pingpong") {
      // The smallest size is the latency: order by minus the size.
      if (const auto us = t.get_optional_double(r, "latency_us")) pick.offer(prefix + "_latency_us", -*size, *us, t, r);
    }
  }
}

}  // namespace

MetricSet metrics_of(const ResultsDir& results, Statistic statistic) {
  Picker pick(statistic);
  if (const auto* b = results.find("gemm")) gemm_metrics(*b, pick);
  if (const auto* b = results.find("memory")) memory_metrics(*b, pick);
  if (const auto* b = results.find("collectives")) collective_metrics(*b, pick);
  if (const auto* b = results.find("p2p")) p2p_metrics(*b, pick);
  MetricSet out;
  pick.into(out);
  return out;
}

RunIdentity identity_of(const ResultsDir& results) {
  RunIdentity id;
  auto fill = [](std::string& field, const nlohmann::json& j, const char* a, const char* b) {
    if (!field.empty() || !j.is_object() || !j.contains(a)) return;
    if (b && !j[a].is_object()) return;  // a sidecar's "device" that is not an object names nothing
    const nlohmann::json& v = b ? j[a].value(b, nlohmann::json()) : j[a];
    if (v.is_string()) field = v.get<std::string>();
  };
  for (const auto& [name, bench] : results.benches) {
    const nlohmann::json& s = bench.sidecar;
    fill(id.device_name, s, "device", "name");
    fill(id.backend, s, "device", "backend");
    fill(id.hostname, s, "host", "hostname");
    fill(id.git_commit, s, "gpucal", "git_commit");
    fill(id.start_time, s, "start_time", nullptr);
  }
  // An imported folder's sidecars name no device: its rows do (the name a log's ranks report, or
  // import --device), the most frequent one per column.
  auto from_rows = [&results](std::string& field, const char* column) {
    if (!field.empty()) return;
    std::map<std::string, std::size_t> seen;
    for (const auto& [name, bench] : results.benches)
      if (bench.table.has_column(column))
        for (std::size_t r : bench.ok_rows)
          if (const std::string& v = bench.table.get_string(r, column); !v.empty()) ++seen[v];
    std::size_t most = 0;
    for (const auto& [value, n] : seen)
      if (n > most) most = n, field = value;
  };
  if (id.device_name.empty()) {  // both from the rows, or neither: a sidecar's device stands alone
    from_rows(id.device_name, "device");
    from_rows(id.backend, "backend");
  }
  return id;
}

}  // namespace gpucal::fleet
