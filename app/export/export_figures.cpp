#include "app/export/export_figures.h"

#include <algorithm>
#include <sstream>

#include "app/export/export_comm.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

const json* memory_section(const json& calibration) {
  if (!calibration.contains("memory") || !calibration["memory"].is_object()) return nullptr;
  return &calibration["memory"];
}

const json* d2d_copy(const json& calibration) {
  const json* m = memory_section(calibration);
  if (!m || !m->contains("d2d_copy") || !(*m)["d2d_copy"].is_object()) return nullptr;
  const json& c = (*m)["d2d_copy"];
  if (!c.contains("best_gbps") || !c["best_gbps"].is_number() || !(c["best_gbps"].get<double>() > 0))
    return nullptr;
  return &c;
}

bool positive_number(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() && j[key].get<double>() > 0;
}

std::optional<Figure> by_hand(const ExportSettings& settings, const std::string& key) {
  if (const auto v = settings.number(key)) return Figure{*v, "--set " + key, true};
  return std::nullopt;
}

}  // namespace

std::optional<Figure> memory_bandwidth_gbps(const json& calibration, const ExportSettings& settings) {
  if (auto f = by_hand(settings, "memory_gbps")) return f;
  if (const json* m = memory_section(calibration); m && positive_number(*m, "device_bandwidth_gbps"))
    return Figure{
        (*m)["device_bandwidth_gbps"].get<double>(),
        "measured: memory.device_bandwidth_gbps, " + m->value("device_bandwidth_source", std::string()),
        false};
  if (const json* c = d2d_copy(calibration))
    return Figure{(*c)["best_gbps"].get<double>(), "measured: best p2p 'copy' d2d bandwidth (read + write)",
                  false};
  return std::nullopt;
}

json memory_mb_efficiency(const json& calibration, const ExportSettings& settings) {
  json table;
  if (const json* m = memory_section(calibration); m && m->contains("copy_MB_efficiency"))
    table = (*m)["copy_MB_efficiency"];
  else if (const json* c = d2d_copy(calibration); c && c->contains("MB_efficiency"))
    table = (*c)["MB_efficiency"];
  if (settings.has("memory_gbps") || !table.is_array() || table.empty())
    return json::array({json::array({0, 1.0})});
  json capped = json::array();
  for (const json& row : table)
    if (row.is_array() && row.size() == 2 && row[0].is_number() && row[1].is_number() &&
        row[1].get<double>() > 0)
      capped.push_back({row[0], std::min(1.0, row[1].get<double>())});
  if (capped.empty()) return json::array({json::array({0, 1.0})});
  return step_table_floor_zero(capped);
}

std::optional<Figure> device_memory_gib(const json& calibration, const ExportSettings& settings) {
  if (auto f = by_hand(settings, "memory_gib")) return f;
  if (!calibration.contains("run_metadata") || !calibration["run_metadata"].is_object()) return std::nullopt;
  for (const auto& [bench, sidecar] : calibration["run_metadata"].items()) {
    if (!sidecar.is_object() || !sidecar.contains("device") || !sidecar["device"].is_object()) continue;
    if (!sidecar["device"].contains("memory_bytes")) continue;
    const json& bytes = sidecar["device"]["memory_bytes"];
    if (bytes.is_number() && bytes.get<double>() > 0)
      return Figure{bytes.get<double>() / (1024.0 * 1024 * 1024),
                    "measured: device.memory_bytes in the " + bench + " sidecar", false};
  }
  return std::nullopt;
}

std::optional<Figure> vector_tflops(const json& calibration, const ExportSettings& settings,
                                    const std::vector<std::string>& dtypes) {
  if (auto f = by_hand(settings, "vector_tflops")) return f;
  const json* m = memory_section(calibration);
  if (!m || !m->contains("vector") || !(*m)["vector"].is_object()) return std::nullopt;
  for (const std::string& dtype : dtypes)
    if (positive_number((*m)["vector"].value(dtype, json()), "best_tflops"))
      return Figure{
          (*m)["vector"][dtype]["best_tflops"].get<double>(),
          "measured: bench_memory fma_chain " + dtype + " best TFLOP/s (memory.vector." + dtype + ")", false};
  return std::nullopt;
}

std::optional<Figure> require_memory_bandwidth(const json& calibration, const ExportSettings& settings,
                                               const std::string& field, std::vector<std::string>& refused) {
  auto f = memory_bandwidth_gbps(calibration, settings);
  if (!f)
    refused.push_back(missing_figure(field, "no device memory bandwidth measured",
                                     "bench_p2p --pattern copy on a GPU (d2d) or bench_memory", "memory_gbps",
                                     "3000"));
  return f;
}

std::optional<Figure> require_device_memory(const json& calibration, const ExportSettings& settings,
                                            const std::string& field, std::vector<std::string>& refused) {
  auto f = device_memory_gib(calibration, settings);
  if (!f)
    refused.push_back(missing_figure(field, "no device memory capacity in the run metadata",
                                     "any bench on the device (its sidecar records device.memory_bytes)",
                                     "memory_gib", "80"));
  return f;
}

std::optional<Figure> require_vector_tflops(const json& calibration, const ExportSettings& settings,
                                            const std::vector<std::string>& dtypes, const std::string& field,
                                            std::vector<std::string>& refused) {
  auto f = vector_tflops(calibration, settings, dtypes);
  if (!f)
    refused.push_back(missing_figure(field, "no vector (non-tensor) throughput measured",
                                     "bench_memory's fma_chain kernel", "vector_tflops", "60"));
  return f;
}

NodeSize gpus_per_node(const json& calibration, const ExportSettings& settings) {
  if (const auto n = settings.number("gpus_per_node"))
    return {static_cast<int64_t>(*n), "--set gpus_per_node"};
  if (const auto n = measured_gpus_per_node(calibration)) return {*n, "the largest measured ranks_per_node"};
  return {};
}

std::optional<std::string> preferred_matrix_dtype(const json& calibration) {
  if (!calibration.contains("compute") || !calibration["compute"].is_object()) return std::nullopt;
  const json& compute = calibration["compute"];
  if (!compute.contains("gemm") || !compute["gemm"].is_object() || compute["gemm"].empty())
    return std::nullopt;
  const json& gemm = compute["gemm"];
  for (const char* dtype : {"bf16", "fp16"})
    if (gemm.contains(dtype)) return std::string(dtype);
  return gemm.begin().key();
}

std::string ReferenceGemm::describe() const {
  std::ostringstream s;
  s << "GEMM m=" << m << " n=" << n << " k=" << k;
  if (batch != 1) s << " batch=" << batch;
  s << " (" << time_us << " us, " << tflops << " TFLOP/s achieved, point " << point << ")";
  return s.str();
}

std::optional<ReferenceGemm> reference_gemm(const json& calibration, const std::string& dtype) {
  if (!calibration.contains("compute") || !calibration["compute"].is_object()) return std::nullopt;
  const json& compute = calibration["compute"];
  if (!compute.contains("gemm") || !compute["gemm"].is_object()) return std::nullopt;
  const json& gemm = compute["gemm"];
  if (!gemm.contains(dtype) || !gemm[dtype].is_object() || !gemm[dtype].contains("by_shape") ||
      !gemm[dtype]["by_shape"].is_array())
    return std::nullopt;
  std::optional<ReferenceGemm> best_long, best_any;
  for (const json& s : gemm[dtype]["by_shape"]) {
    if (!s.is_object() || !s.contains("gflop") || !s.contains("tflops") || !s["tflops"].is_number()) continue;
    ReferenceGemm g;
    g.m = s.value("m", int64_t{0});
    g.n = s.value("n", int64_t{0});
    g.k = s.value("k", int64_t{0});
    g.batch = s.value("batch", int64_t{1});
    g.flops = s["gflop"].get<double>() * 1e9;
    g.tflops = s["tflops"].get<double>();
    g.point = s.value("point", "");
    if (!(g.flops > 0) || !(g.tflops > 0)) continue;
    g.time_us = g.flops / (g.tflops * 1e6);  // 1 TFLOP/s = 1e6 flop per µs
    if (!best_any || g.tflops > best_any->tflops) best_any = g;
    if (g.time_us >= kReferenceGemmMinUs && (!best_long || g.tflops > best_long->tflops)) best_long = g;
  }
  return best_long ? best_long : best_any;
}

json step_table_floor_zero(const json& table) {
  json out = table;
  if (!out.empty()) out.back()[0] = 0;
  return out;
}

}  // namespace gpucal::calibration
