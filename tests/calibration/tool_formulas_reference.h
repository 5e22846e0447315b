// The consumers' own time formulas as read in their code, on our exported fields: the conformance
// tests (test_conformance_*.cpp) evaluate them against known truth, and the workload-aware export
// tests (tests/export/test_workload_fields.cpp) against the residual table gpucal writes with its
// own implementation (app/export/tool_formulas.h).
#pragma once
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

namespace gpucal::calibration::testing {

// NERSC transformer-perf-estimates estimates.py get_time_comm (vol in GB, s).
inline double nersc_comm_s(const nlohmann::json& s, double vol_gb, int n_gpus, const std::string& type, int topology) {
  const double ls = s["ib_latency"], lf = s["nvlink_latency"];
  const double bs = s["ib_bandwidth"].get<double>() * s["ib_eff"].get<double>();
  const double bf = s["nvlink_bandwidth"].get<double>() * s["nvlink_eff"].get<double>();
  const double nic = s["nic_factor"];
  const int nodes = n_gpus / topology;
  const double correction = (type == "reduce" || type == "broadcast") ? 1.0 : (n_gpus - 1.0) / n_gpus;
  if (topology == 1) return ls * (n_gpus - 1) + correction * vol_gb / bs;
  if (nodes == 1) return lf * (n_gpus - 1) + correction * vol_gb / bf;
  double t = std::max(correction * vol_gb / (nic * topology * bs), correction * vol_gb / bf);
  if (type == "allreduce") t *= 2;
  return t + ls * (nodes - 1) + lf * (n_gpus - nodes);
}

// estimates.py get_time_flops for a Linear layer's GEMM (layers.py: m·n·(k mults + (k-1) adds)), s.
inline double nersc_gemm_s(const nlohmann::json& s, double m, double n, double k) {
  const double flops = m * n * (k + (k - 1)) * s["flops_units"].get<double>();
  return 20e-6 + flops / (s["matrix_flops_fp16"].get<double>() * 0.8);
}

// Calculon network.py Network.time: latency + scalar·S·(1 + offset/n) / (bandwidth·1e9·efficiency), s.
inline double calculon_time_s(const nlohmann::json& net, const std::string& op, double size_bytes, int n) {
  const double scalar = net["ops"][op][0].get<double>();
  const double offset = net["ops"][op][1].is_null() ? 0.0 : net["ops"][op][1].get<double>();
  double bytes = size_bytes * scalar;
  bytes += bytes / n * offset;
  return net["latency"].get<double>() +
         bytes / (net["bandwidth"].get<double>() * 1e9 * net["efficiency"].get<double>());
}

}  // namespace gpucal::calibration::testing
