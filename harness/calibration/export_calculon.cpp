// Calculon (calculon-ai/calculon) system JSON, written to <out>/calculon/system.json.
//   matrix.<dtype>.tflops            TFLOP/s: the GEMM rows' recorded peak_tflops (the
//                                    reference of the efficiencies), else the best achieved
//   matrix.<dtype>.gflops_efficiency [[GFLOP per op, efficiency], ...] descending: GEMM shapes
//                                    bucketed by floor(log2 GFLOP), median of the best
//                                    implementation per shape; last threshold set to 0
//   vector.<dtype>                   bench_memory fma_chain: tflops = the vector peak (else the best
//                                    achieved), gflops_efficiency [[0, best / peak]] (one size)
//   mem1.GBps                        GB/s: memory.device_bandwidth_gbps (bench_memory's copy plateau
//                                    beyond the caches, else the best p2p 'copy' D2D bandwidth)
//   mem1.MB_efficiency               [[MB (1e6 B), bandwidth / GBps <= 1], ...] descending
//   mem1.GiB                         device memory from the run metadata, when recorded
//   networks[i]                      tier 0 intra-node (spans_nodes=0), tier 1 inter-node:
//                                    bandwidth GB/s = α–β beta_gbps (bus), efficiency 1.0
//                                    (the bandwidth is already achieved), latency s = alpha_us·1e-6,
//                                    size = GPUs in the tier
// Calculon's time = latency + scalar·S·(1 + offset/n)/(bandwidth·efficiency) with
// all_reduce [2, -1] is exactly t = α + S·2(n-1)/n / busbw: the α–β fit's form.
// Not measured, so null and reported: networks[].processor_usage.
#include <fstream>

#include "export_common.h"

namespace gpucal::calibration {

using nlohmann::json;

ExportReport export_calculon(const json& calibration, const std::string& out_dir) {
  ExportReport report;
  report.consumer = "calculon";
  json system = json::object();

  json matrix = json::object();
  const json& gemm = calibration.at("compute").at("gemm");
  if (gemm.is_object() && !gemm.empty()) {
    for (const auto& [dtype, table] : gemm.items())
      matrix[calculon_dtype_name(dtype)] = {{"tflops", table.at("reference_tflops")},
                                            {"gflops_efficiency", step_table_floor_zero(table.at("gflops_efficiency"))}};
    report.notes.push_back("matrix: efficiencies relative to each dtype's tflops (peak_tflops recorded by bench_gemm, "
                           "else best achieved); smallest GFLOP threshold lowered to 0 so every op size matches");
  } else {
    report.unfilled.push_back("matrix: no GEMM rows");
  }
  system["matrix"] = matrix.empty() ? json(nullptr) : matrix;
  json vector = json::object();
  for (const char* dtype : {"fp32", "fp16", "bf16"}) {
    const auto v = vector_rate(calibration, dtype);
    if (!v) continue;
    // As matrix: tflops is the peak when recorded, the efficiency the measured share of it
    // (fma_chain is one size: the table has one step).
    const double peak = v->peak_tflops.is_number() ? v->peak_tflops.get<double>() : v->best_tflops;
    vector[calculon_dtype_name(dtype)] = {{"tflops", peak}, {"gflops_efficiency", json::array({json::array({0.0, v->best_tflops / peak})})}};
  }
  if (!vector.empty()) {
    system["vector"] = vector;
    report.notes.push_back("vector: bench_memory fma_chain TFLOP/s against the vector peak, one size (gflops_efficiency "
                           "has a single step)");
  } else {
    system["vector"] = nullptr;
    report.unfilled.push_back("vector: no bench_memory fma_chain rows");
  }

  json mem1{{"GiB", nullptr}, {"GBps", nullptr}, {"MB_efficiency", nullptr}};
  if (const auto bw = memory_bandwidth(calibration)) {
    mem1["GBps"] = bw->gbps;
    if (bw->mb_efficiency.is_array()) mem1["MB_efficiency"] = step_table_floor_zero(bw->mb_efficiency);
    report.notes.push_back("mem1: GBps = " + bw->source);
  } else {
    report.unfilled.push_back("mem1.GBps, mem1.MB_efficiency: no bench_memory copy plateau and no p2p 'copy' d2d rows");
  }
  if (const auto gib = device_memory_gib(calibration)) mem1["GiB"] = *gib;
  else report.unfilled.push_back("mem1.GiB: no device memory capacity in the run metadata");
  system["mem1"] = mem1;
  system["processing_mode"] = "no_overlap";
  report.notes.push_back("processing_mode: Calculon setting, not a measurement (no_overlap as in its examples)");

  const json ops{{"p2p", {1, nullptr}}, {"all_reduce", {2, -1}}, {"all_gather", {1, -1}}, {"reduce_scatter", {1, -1}}};
  json networks = json::array();
  const char* tier_names[] = {"intra-node", "inter-node"};
  for (int spans_nodes : {0, 1}) {
    const auto tier = select_network_tier(calibration, spans_nodes);
    if (!tier) {
      report.unfilled.push_back(std::string("networks: no ") + tier_names[spans_nodes] +
                                " tier (no collectives rows with spans_nodes=" + std::to_string(spans_nodes) +
                                " and an alpha-beta fit)");
      continue;
    }
    networks.push_back({{"bandwidth", tier->beta_gbps},
                        {"efficiency", 1.0},
                        {"size", tier->tier_size},
                        {"latency", tier->alpha_us * 1e-6},
                        {"ops", ops},
                        {"must_be_filled", spans_nodes == 0},
                        {"processor_usage", nullptr}});
    report.notes.push_back(std::string("networks[") + std::to_string(networks.size() - 1) + "] " +
                           tier_names[spans_nodes] + " from " + tier->describe());
    report.unfilled.push_back(std::string("networks[") + std::to_string(networks.size() - 1) +
                              "].processor_usage: compute used by communication is not measured");
  }
  system["networks"] = networks;

  const std::string path = ensure_dir(out_dir, "calculon") + "/system.json";
  write_text_file(path, system.dump(2) + "\n");
  report.files_written.push_back(path);
  return report;
}

}  // namespace gpucal::calibration
