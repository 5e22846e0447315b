#include "app/common/calibration_schema.h"

#include <cmath>

#include "app/common/calibration_json.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

enum class Kind { object, array, string, integer, number, positive, nonnegative };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::object: return "an object";
    case Kind::array: return "an array";
    case Kind::string: return "a string";
    case Kind::integer: return "an integer";
    case Kind::number: return "a finite number";
    case Kind::positive: return "a positive finite number";
    case Kind::nonnegative: return "a finite number >= 0";
  }
  return "?";
}

bool is_kind(const json& v, Kind k) {
  switch (k) {
    case Kind::object: return v.is_object();
    case Kind::array: return v.is_array();
    case Kind::string: return v.is_string();
    case Kind::integer: return v.is_number_integer();
    case Kind::number: return v.is_number() && std::isfinite(v.get<double>());
    case Kind::positive: return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
    case Kind::nonnegative: return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
  }
  return false;
}

std::string shown(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + text;
}

class Checker {
 public:
  explicit Checker(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw SchemaError(source_ + ": " + path + ": " + what);
  }
  const json& value(const json& v, const std::string& path, Kind k) const {
    if (!is_kind(v, k)) fail(path, "expected " + std::string(kind_name(k)) + ", got " + shown(v));
    return v;
  }
  // obj[key] of kind k; `nullable`: null is allowed too (and returned).
  const json& field(const json& obj, const std::string& path, const char* key, Kind k, bool nullable = false) const {
    const std::string at = path + "." + key;
    const auto it = obj.find(key);
    if (it == obj.end()) fail(at, "missing");
    if (nullable && it->is_null()) return *it;
    return value(*it, at, k);
  }
  const json& nonempty_array(const json& obj, const std::string& path, const char* key) const {
    const json& a = field(obj, path, key, Kind::array);
    if (a.empty()) fail(path + "." + key, "expected a non-empty array, got []");
    return a;
  }
  // [[x, efficiency], ...] as Calculon reads it.
  void step_table(const json& obj, const std::string& path, const char* key) const {
    const json& t = nonempty_array(obj, path, key);
    for (size_t i = 0; i < t.size(); ++i) {
      const std::string at = path + "." + key + "[" + std::to_string(i) + "]";
      if (!t[i].is_array() || t[i].size() != 2) fail(at, "expected a pair [threshold, efficiency], got " + shown(t[i]));
      value(t[i][0], at + "[0]", Kind::nonnegative);
      value(t[i][1], at + "[1]", Kind::nonnegative);
    }
  }
  // A fit is either {"error": "..."} or its parameters.
  void fit(const json& group, const std::string& path, const char* key, std::initializer_list<const char*> params,
           bool required) const {
    const auto it = group.find(key);
    if (it == group.end()) {
      if (required) fail(path + "." + key, "missing");
      return;
    }
    const std::string at = path + "." + key;
    value(*it, at, Kind::object);
    if (it->contains("error")) {
      field(*it, at, "error", Kind::string);
      return;
    }
    for (const char* p : params) field(*it, at, p, Kind::number);
  }
  void curve_group(const json& g, const std::string& path) const {
    value(g, path, Kind::object);
    const json& points = nonempty_array(g, path, "points");
    for (size_t i = 0; i < points.size(); ++i) {
      const std::string at = path + ".points[" + std::to_string(i) + "]";
      value(points[i], at, Kind::object);
      field(points[i], at, "size_bytes", Kind::positive);
      field(points[i], at, "time_us_median", Kind::positive);
    }
    fit(g, path, "alpha_beta", {"alpha_us", "beta_gbps"}, true);
    if (!g["alpha_beta"].contains("error")) field(g["alpha_beta"], path + ".alpha_beta", "beta_gbps", Kind::positive);
    fit(g, path, "sigmoid", {"H_gbps", "k_per_log2_byte", "x0_log2_bytes", "y0_gbps"}, false);
    const json& spans = field(g, path, "spans_nodes", Kind::integer);
    // -1: a collectives group imported from a log that names no hosts (nnodes and ranks_per_node 0)
    const bool unknown_ok = g.contains("collective");
    if (spans != 0 && spans != 1 && !(unknown_ok && spans == -1))
      fail(path + ".spans_nodes", std::string("expected 0 or 1") + (unknown_ok ? " (-1: nodes unknown)" : "") +
                                      ", got " + shown(spans));
  }

 private:
  std::string source_;
};

}  // namespace

void validate_calibration(const json& doc, const std::string& source) {
  const Checker c(source);
  const std::string root = "$";
  c.value(doc, root, Kind::object);
  const json& version = c.field(doc, root, "calibration_schema_version", Kind::integer);
  if (version != kCalibrationSchemaVersion)
    c.fail("$.calibration_schema_version",
           version.dump() + ", this gpucal reads " + std::to_string(kCalibrationSchemaVersion));

  const json& compute = c.field(doc, root, "compute", Kind::object);
  const json& gemm = c.field(compute, "$.compute", "gemm", Kind::object, true);
  if (gemm.is_object())
    for (const auto& [dtype, table] : gemm.items()) {
      const std::string at = "$.compute.gemm." + dtype;
      c.value(table, at, Kind::object);
      c.field(table, at, "best_tflops", Kind::positive);
      c.field(table, at, "reference_tflops", Kind::positive);
      c.field(table, at, "best_point", Kind::string);
      c.field(table, at, "regime", Kind::string);
      c.step_table(table, at, "gflops_efficiency");
    }
  if (!compute.contains("attention")) c.fail("$.compute.attention", "missing");

  if (!doc.contains("memory")) c.fail("$.memory", "missing");
  const json& memory = c.field(doc, root, "memory", Kind::object, true);
  if (memory.is_object() && memory.contains("d2d_copy")) {
    const json& d2d = c.field(memory, "$.memory", "d2d_copy", Kind::object);
    c.field(d2d, "$.memory.d2d_copy", "best_gbps", Kind::positive);
    c.step_table(d2d, "$.memory.d2d_copy", "MB_efficiency");
  }
  // bench_memory's figures, as the exporters read them (each optional: absent without rows).
  if (memory.is_object()) {
    if (memory.contains("device_bandwidth_gbps")) c.field(memory, "$.memory", "device_bandwidth_gbps", Kind::positive);
    if (memory.contains("copy_MB_efficiency")) c.step_table(memory, "$.memory", "copy_MB_efficiency");
    if (memory.contains("vector"))
      for (const auto& [dtype, rate] : c.field(memory, "$.memory", "vector", Kind::object).items()) {
        const std::string at = "$.memory.vector." + dtype;
        c.value(rate, at, Kind::object);
        c.field(rate, at, "best_tflops", Kind::positive);
        if (rate.contains("peak_tflops")) c.field(rate, at, "peak_tflops", Kind::positive, true);
      }
  }

  const json& comm = c.field(doc, root, "communication", Kind::object);
  const json& colls = c.field(comm, "$.communication", "collectives", Kind::array);
  for (size_t i = 0; i < colls.size(); ++i) {
    const std::string at = "$.communication.collectives[" + std::to_string(i) + "]";
    const json& g = c.value(colls[i], at, Kind::object);
    c.field(g, at, "collective", Kind::string);
    c.field(g, at, "dtype", Kind::string);
    // nnodes and ranks_per_node 0 with spans_nodes -1: imported from a log that names no hosts.
    const bool nodes_unknown = g.contains("spans_nodes") && g["spans_nodes"] == -1;
    for (const char* key : {"nranks", "nnodes", "ranks_per_node"}) {
      const int64_t v = c.field(g, at, key, Kind::integer).get<int64_t>();
      const bool ok = v >= 1 || (nodes_unknown && v == 0 && std::string(key) != "nranks");
      if (!ok)
        c.fail(at + "." + key, std::string("expected at least 1") +
                                   (nodes_unknown && std::string(key) != "nranks" ? " (0 with spans_nodes -1)" : "") +
                                   ", got " + g[key].dump());
    }
    if (nodes_unknown && (g["nnodes"] != 0 || g["ranks_per_node"] != 0))
      c.fail(at + ".spans_nodes", "-1 (nodes unknown) needs nnodes and ranks_per_node 0, got " + g["nnodes"].dump() +
                                      " and " + g["ranks_per_node"].dump());
    c.curve_group(g, at);
  }
  const json& p2p = c.field(comm, "$.communication", "p2p", Kind::array);
  for (size_t i = 0; i < p2p.size(); ++i) {
    const std::string at = "$.communication.p2p[" + std::to_string(i) + "]";
    c.field(c.value(p2p[i], at, Kind::object), at, "pattern", Kind::string);
    c.curve_group(p2p[i], at);
  }
  if (doc.contains("run_metadata")) c.field(doc, root, "run_metadata", Kind::object);
}

std::string left_out_as_suspect(const nlohmann::json& calibration, const std::string& bench) {
  const nlohmann::json* sources = calibration.is_object() && calibration.contains("sources") ? &calibration["sources"] : nullptr;
  if (!sources || !sources->contains(bench) || !(*sources)[bench].is_object()) return "";
  const nlohmann::json& s = (*sources)[bench];
  if (!s.contains("suspect_left_out") || !s["suspect_left_out"].is_number_integer()) return "";
  const auto n = s["suspect_left_out"].get<int64_t>();
  if (n <= 0) return "";
  return " (" + std::to_string(n) + " ok " + bench + " row(s) were left out: their timings are suspect, preempted by " +
         "other work; rerun on a quiet machine, or pass --allow-suspect)";
}

}  // namespace gpucal::calibration
