#include "export_common.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "harness/file_io.h"

namespace gpucal::calibration {

using nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string>& export_targets() {
  static const std::vector<std::string> targets{"calculon", "astrasim", "nersc", "vtrain"};
  return targets;
}

std::vector<ExportReport> export_to(const json& calibration, const std::string& target, const std::string& out_dir) {
  std::vector<ExportReport> reports;
  const bool all = target == "all";
  if (!all && std::find(export_targets().begin(), export_targets().end(), target) == export_targets().end())
    throw std::invalid_argument("unknown export target '" + target + "' (calculon, astrasim, nersc, vtrain, all)");
  if (all || target == "calculon") reports.push_back(export_calculon(calibration, out_dir));
  if (all || target == "astrasim") reports.push_back(export_astrasim(calibration, out_dir));
  if (all || target == "nersc") reports.push_back(export_nersc(calibration, out_dir));
  if (all || target == "vtrain") reports.push_back(export_vtrain(calibration, out_dir));
  return reports;
}

std::string format_export_report(const ExportReport& r) {
  std::ostringstream s;
  s << r.consumer << ": wrote";
  if (r.files_written.empty()) s << " nothing";
  for (const auto& f : r.files_written) s << " " << f;
  s << "\n";
  for (const auto& n : r.notes) s << "  note: " << n << "\n";
  for (const auto& u : r.unfilled) s << "  NOT FILLED: " << u << "\n";
  return s.str();
}

std::string NetworkTier::describe() const {
  std::ostringstream s;
  s << group.value("collective", "?") << " " << group.value("dtype", "?") << " nranks=" << group.value("nranks", 0)
    << " ranks_per_node=" << group.value("ranks_per_node", 0) << " nnodes=" << group.value("nnodes", 0);
  return s.str();
}

std::optional<NetworkTier> select_network_tier(const json& calibration, int spans_nodes) {
  const json* best = nullptr;
  auto score = [](const json& g) {
    return std::make_tuple(g.value("collective", "") == "allreduce" ? 1 : 0, g.value("nranks", int64_t{0}),
                           g.at("points").size());
  };
  for (const json& g : calibration.at("communication").at("collectives")) {
    if (g.value("spans_nodes", int64_t{-1}) != spans_nodes) continue;
    if (!g.contains("alpha_beta") || g.at("alpha_beta").contains("error")) continue;
    if (!best || score(g) > score(*best)) best = &g;
  }
  if (!best) return std::nullopt;
  NetworkTier tier;
  tier.group = *best;
  tier.alpha_us = (*best).at("alpha_beta").at("alpha_us").get<double>();
  tier.beta_gbps = (*best).at("alpha_beta").at("beta_gbps").get<double>();
  tier.tier_size = spans_nodes ? (*best).at("nranks").get<int64_t>() : (*best).at("ranks_per_node").get<int64_t>();
  return tier;
}

std::optional<P2pLatency> p2p_latency(const json& calibration, int spans_nodes) {
  auto preference = [](const json& g) {
    const std::string pattern = g.value("pattern", "");
    return pattern == "pingpong" ? 2 : pattern == "sendrecv" ? 1 : 0;
  };
  const json* best = nullptr;
  for (const json& g : calibration.at("communication").at("p2p")) {
    if (g.value("spans_nodes", -1) != spans_nodes) continue;
    if (!g.contains("alpha_beta") || g.at("alpha_beta").contains("error")) continue;
    if (!best || preference(g) > preference(*best)) best = &g;
  }
  if (!best) return std::nullopt;
  P2pLatency out;
  out.pattern = (*best).value("pattern", "");
  out.us = (*best).at("alpha_beta").at("alpha_us").get<double>() / (out.pattern == "pingpong" ? 2 : 1);
  return out;
}

std::optional<std::string> preferred_matrix_dtype(const json& calibration) {
  const json& gemm = calibration.at("compute").at("gemm");
  if (!gemm.is_object() || gemm.empty()) return std::nullopt;
  for (const char* dtype : {"bf16", "fp16"})
    if (gemm.contains(dtype)) return std::string(dtype);
  return gemm.begin().key();
}

std::string calculon_dtype_name(const std::string& dtype) {
  if (dtype == "bf16") return "bfloat16";
  if (dtype == "fp16") return "float16";
  if (dtype == "fp32") return "float32";
  if (dtype == "fp64") return "float64";
  if (dtype.rfind("fp8", 0) == 0) return "float8";
  return dtype;
}

std::string nccl_type_name(const std::string& dtype) {
  if (dtype == "bf16") return "bfloat16";
  if (dtype == "fp16") return "half";
  if (dtype == "fp32") return "float";
  if (dtype == "fp64") return "double";
  return dtype;  // int8, uint8, int32, ... are already nccl-tests names
}

std::optional<int> dtype_size_bytes(const std::string& dtype) {
  if (dtype == "fp64" || dtype == "int64" || dtype == "uint64") return 8;
  if (dtype == "fp32" || dtype == "int32" || dtype == "uint32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  if (dtype == "int8" || dtype == "uint8" || dtype.rfind("fp8", 0) == 0) return 1;
  return std::nullopt;
}

std::optional<MemoryBandwidth> memory_bandwidth(const json& calibration) {
  const json& m = calibration.contains("memory") ? calibration["memory"] : json(nullptr);
  if (!m.is_object()) return std::nullopt;
  MemoryBandwidth b;
  if (m.contains("device_bandwidth_gbps") && m["device_bandwidth_gbps"].is_number()) {
    b.gbps = m["device_bandwidth_gbps"].get<double>();
    b.source = m.value("device_bandwidth_source", "memory.device_bandwidth_gbps");
  } else if (m.contains("d2d_copy") && m["d2d_copy"].is_object()) {
    b.gbps = m["d2d_copy"]["best_gbps"].get<double>();
    b.source = "p2p d2d copy (best)";
  } else {
    return std::nullopt;
  }
  if (m.contains("copy_MB_efficiency") && m["copy_MB_efficiency"].is_array())
    b.mb_efficiency = m["copy_MB_efficiency"];
  else if (m.contains("d2d_copy") && m["d2d_copy"].is_object())
    b.mb_efficiency = m["d2d_copy"]["MB_efficiency"];
  return b;
}

std::optional<VectorRate> vector_rate(const json& calibration, const std::string& dtype) {
  const json& m = calibration.contains("memory") ? calibration["memory"] : json(nullptr);
  if (!m.is_object() || !m.contains("vector") || !m["vector"].contains(dtype)) return std::nullopt;
  const json& v = m["vector"][dtype];
  return VectorRate{v["best_tflops"].get<double>(), v.value("peak_tflops", json(nullptr))};
}

// Device memory capacity from the benches' sidecars: device.memory_bytes (results/SCHEMA.md),
// the first sidecar that has it.
std::optional<double> device_memory_gib(const json& calibration) {
  if (!calibration.contains("run_metadata")) return std::nullopt;
  for (const auto& [bench, sidecar] : calibration.at("run_metadata").items()) {
    (void)bench;
    if (sidecar.is_object() && sidecar.contains("device") && sidecar.at("device").contains("memory_bytes") &&
        sidecar.at("device").at("memory_bytes").is_number())
      return sidecar.at("device").at("memory_bytes").get<double>() / (1024.0 * 1024 * 1024);
  }
  return std::nullopt;
}

json step_table_floor_zero(const json& table) {
  json out = table;
  if (!out.empty()) out.back()[0] = 0;
  return out;
}

std::string ensure_dir(const std::string& out_dir, const std::string& sub) {
  const fs::path dir = fs::path(out_dir) / sub;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir.string() + ": cannot create: " + ec.message());
  return dir.string();
}

void write_text_file(const std::string& path, const std::string& text) { write_file_atomic(path, text); }

}  // namespace gpucal::calibration
