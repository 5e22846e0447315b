#include "app/export/tool_formulas.h"

#include <algorithm>

#include "app/export/export_common.h"

namespace gpucal::calibration::tool_formulas {

using nlohmann::json;

double nersc_gemm_s(const json& system, const model::GemmShape& g) {
  const double flops = static_cast<double>(g.batch) * static_cast<double>(g.m) * static_cast<double>(g.n) *
                       (2.0 * static_cast<double>(g.k) - 1.0);
  return 20e-6 + flops * system["flops_units"].get<double>() / (0.8 * system["matrix_flops_fp16"].get<double>());
}

double nersc_comm_s(const json& s, double size_bytes, int64_t n_gpus, const std::string& type, int64_t topology) {
  const double vol_gb = size_bytes * 1e-9;
  const double ls = s["ib_latency"], lf = s["nvlink_latency"];
  const double bs = s["ib_bandwidth"].get<double>() * s["ib_eff"].get<double>();
  const double bf = s["nvlink_bandwidth"].get<double>() * s["nvlink_eff"].get<double>();
  const double nic = s["nic_factor"];
  const double n = static_cast<double>(n_gpus), t = static_cast<double>(topology);
  const double nodes = std::max(1.0, n / t);
  const double correction = (n - 1) / n;
  if (topology == 1) return ls * (n - 1) + correction * vol_gb / bs;
  if (nodes <= 1) return lf * (n - 1) + correction * vol_gb / bf;
  double time = std::max(correction * vol_gb / (nic * t * bs), correction * vol_gb / bf);
  if (type == "allreduce") time *= 2;
  return time + ls * (nodes - 1) + lf * (n - nodes);
}

std::string nersc_comm_type(const std::string& collective) {
  if (collective == "allreduce" || collective == "allgather") return collective;
  if (collective == "reduce_scatter") return "reducescatter";
  return "";
}

double calculon_comm_s(const json& net, const std::string& op, double size_bytes, int64_t n) {
  const double scalar = net["ops"][op][0].get<double>();
  const double offset = net["ops"][op][1].is_null() ? 0.0 : net["ops"][op][1].get<double>();
  double bytes = size_bytes * scalar;
  bytes += bytes / static_cast<double>(n) * offset;
  return net["latency"].get<double>() + bytes / (net["bandwidth"].get<double>() * 1e9 * net["efficiency"].get<double>());
}

std::string calculon_op_name(const model::ModelOp& op) {
  if (op.kind == model::OpKind::p2p) return op.comm.collective == "sendrecv" ? "p2p" : "";
  if (op.comm.collective == "allreduce") return "all_reduce";
  if (op.comm.collective == "allgather") return "all_gather";
  if (op.comm.collective == "reduce_scatter") return "reduce_scatter";
  return "";
}

double astrasim_collective_s(double bandwidth_gibps, double latency_ns, double local_mem_gbps,
                             const std::string& collective, double size_bytes, int64_t npus) {
  const double n = static_cast<double>(npus);
  const double steps = collective == "allreduce" ? 2 * (n - 1) : collective == "alltoall" ? n * (n - 1) / 2 : n - 1;
  const double step_s = 2 * latency_ns * 1e-9 + size_bytes / n / (bandwidth_gibps * kGiB);
  const double reduced = collective == "allgather" || collective == "alltoall" ? 0.0 : (n - 1) / n * size_bytes;
  return steps * step_s + 3 * reduced / (local_mem_gbps * 1e9);
}

double astrasim_gemm_s(double peak_tflops, double flops) { return flops / (peak_tflops * 1e12); }

double vtrain_allreduce_s(double bandwidth, bool inter_node, double size_bytes, int64_t n) {
  const double bytes_per_s = inter_node ? bandwidth * kGiB / 8 : bandwidth * kGiB;
  const double nd = static_cast<double>(n);
  return size_bytes / bytes_per_s * 2 * (nd - 1) / nd;
}

}  // namespace gpucal::calibration::tool_formulas
