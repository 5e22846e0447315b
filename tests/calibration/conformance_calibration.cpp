#include "tests/calibration/conformance_calibration.h"

#include <cmath>

#include "app/fit/compute_tables.h"

namespace gpucal::calibration::testing {

using nlohmann::json;

double bus_factor(const std::string& collective, int nranks) {
  const double n = nranks;
  return collective == "allreduce" ? 2 * (n - 1) / n : (n - 1) / n;
}

CommTruth comm_truth(const std::string& collective, int nranks, bool spans_nodes) {
  if (spans_nodes) {
    if (collective == "allreduce") return {30.0, 45.0};
    if (collective == "allgather") return {25.0, 42.0};
    return {26.0, 40.0};
  }
  const double n = nranks;
  if (collective == "allreduce") return {6 + 1.5 * n, 120 + 7.5 * n};
  if (collective == "allgather") return {5 + 1.0 * n, 110 + 8 * n};
  return {5.5 + 1.0 * n, 105 + 8 * n};
}

CommTruth p2p_truth(bool spans_nodes) {
  return spans_nodes ? CommTruth{8.0, 24.0} : CommTruth{3.0, 150.0};
}

double truth_time_us(const std::string& collective, int nranks, bool spans_nodes, double size_bytes) {
  const CommTruth t = comm_truth(collective, nranks, spans_nodes);
  return t.alpha_us + size_bytes * bus_factor(collective, nranks) / (t.busbw_gbps * 1e3);
}

double gemm_truth_tflops(double m, double n, double k) {
  const double flops = 2 * m * n * k;
  return 800.0 * flops / (flops + 4e10);
}

namespace {

constexpr double kPeakTflops = 989.0;

// Sizes 8 B .. 1 GiB by x2, the calibration suite's sweep.
std::vector<double> sweep_sizes() {
  std::vector<double> s;
  for (double size = 8; size <= 1024.0 * 1024 * 1024; size *= 2) s.push_back(size);
  return s;
}

json comm_group(const std::string& collective, int nranks, int nnodes) {
  const bool spans = nnodes > 1;
  const CommTruth truth = comm_truth(collective, nranks, spans);
  json points = json::array();
  for (double size : sweep_sizes()) {
    const double t = truth_time_us(collective, nranks, spans, size);
    points.push_back({{"size_bytes", size},
                      {"time_us_median", t},
                      {"busbw_gbps", size * bus_factor(collective, nranks) / (t * 1e3)}});
  }
  return {{"collective", collective},
          {"dtype", "fp32"},
          {"nranks", nranks},
          {"ranks_per_node", nranks / nnodes},
          {"nnodes", nnodes},
          {"spans_nodes", spans ? 1 : 0},
          {"bus_factor", bus_factor(collective, nranks)},
          {"points", points},
          {"alpha_beta", {{"alpha_us", truth.alpha_us}, {"beta_gbps", truth.busbw_gbps}}}};
}

json p2p_group(bool spans_nodes) {
  const CommTruth truth = p2p_truth(spans_nodes);
  json points = json::array();
  for (double size : sweep_sizes())
    points.push_back(
        {{"size_bytes", size}, {"time_us_median", truth.alpha_us + size / (truth.busbw_gbps * 1e3)}});
  return {{"pattern", "sendrecv"},
          {"direction", "uni"},
          {"link_class", spans_nodes ? "net" : "nvlink"},
          {"spans_nodes", spans_nodes ? 1 : 0},
          {"bus_factor", 1.0},
          {"points", points},
          {"alpha_beta", {{"alpha_us", truth.alpha_us}, {"beta_gbps", truth.busbw_gbps}}}};
}

json gemm_section() {
  json shapes = json::array();
  std::vector<std::pair<double, double>> gflop_eff;
  double best = 0;
  for (int m : {1024, 4096, 8192})
    for (int n : {1024, 4096, 8192})
      for (int k : {1024, 4096, 8192}) {
        const double tflops = gemm_truth_tflops(m, n, k), gflop = 2.0 * m * n * k / 1e9;
        best = std::max(best, tflops);
        gflop_eff.emplace_back(gflop, tflops / kPeakTflops);
        shapes.push_back({{"m", m},
                          {"n", n},
                          {"k", k},
                          {"batch", 1},
                          {"gflop", gflop},
                          {"tflops", tflops},
                          {"efficiency", tflops / kPeakTflops},
                          {"point", "gemm/cublaslt/bf16/NN/m" + std::to_string(m) + "/n" + std::to_string(n) +
                                        "/k" + std::to_string(k) + "/b1/cold"}});
      }
  json table = json::array();
  for (const auto& [x, eff] : step_table_by_log2_bucket(gflop_eff)) table.push_back({x, eff});
  return {{"bf16",
           {{"best_tflops", best},
            {"peak_tflops", kPeakTflops},
            {"reference_tflops", kPeakTflops},
            {"efficiency_reference", "peak_tflops"},
            {"regime", "cold"},
            {"gflops_efficiency", table},
            {"by_shape", shapes}}}};
}

}  // namespace

json conformance_calibration(bool inter_node) {
  json collectives = json::array();
  for (const char* c : {"allreduce", "allgather", "reduce_scatter"}) {
    for (int n : {2, 4, 8}) collectives.push_back(comm_group(c, n, 1));
    if (inter_node) collectives.push_back(comm_group(c, 2 * kGpusPerNode, 2));
  }
  json p2p = json::array({p2p_group(false)});
  if (inter_node) p2p.push_back(p2p_group(true));
  const json sidecar{
      {"device", {{"name", kDeviceName}, {"memory_bytes", kDeviceMemoryGiB * 1024 * 1024 * 1024}}}};
  return {{"calibration_schema_version", 1},
          {"compute", {{"gemm", gemm_section()}, {"attention", nullptr}}},
          {"memory",
           {{"d2d_copy",
             {{"best_gbps", kCopyGbps},
              {"efficiency_reference", "best_gbps"},
              {"MB_efficiency", json::array({json::array({1073.741824, 1.0}), json::array({1.048576, 0.6}),
                                             json::array({0.001024, 0.05})})}}}}},
          {"communication", {{"collectives", collectives}, {"p2p", p2p}}},
          {"run_metadata", {{"gemm", sidecar}, {"collectives", sidecar}}}};
}

std::vector<std::string> conformance_settings() {
  return {"vector_tflops=60", "processor_usage=0.05", "offload_gbps=50", "offload_gib=512", "nodes=16"};
}

}  // namespace gpucal::calibration::testing
