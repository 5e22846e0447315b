// NERSC transformer-perf-estimates (arXiv 2410.00273) inputs, written to <out>/nersc/:
//   system.json        matrix_flops_fp16   TFLOP/s, best ACHIEVED bf16 (else fp16) GEMM
//                      hbm_bandwidth       GB/s, memory.device_bandwidth_gbps (bench_memory's copy
//                                          plateau beyond the caches, else best p2p 'copy' D2D)
//                      vector_flops_fp32, vector_flops_fp16  TFLOP/s, best achieved bench_memory
//                                          fma_chain fp32 / fp16 (else bf16)
//                      hbm_capacity        GiB from the run metadata, when recorded
//                      nvlink_bandwidth    GB/s, intra-node tier (spans_nodes=0) α–β beta_gbps (bus)
//                      nvlink_eff          1.0 (the bandwidth is already achieved)
//                      nvlink_latency      s, intra-node tier alpha_us·1e-6
//                      nvlink_size         GPUs in the measured intra-node tier (ranks_per_node;
//                                          a lower bound on the NVLink domain)
//                      ib_bandwidth, ib_eff, ib_latency: the same from the inter-node tier
//                      nic_factor: not measured -> null, reported
//   comm_sigmoid_fits.json  the older path's form {op: {gpus_per_node: {nodes: [H, k, x0, y0]}}}:
//                      bus bandwidth GB/s = H / (1 + e^(-k (log2 bytes - x0))) + y0, one per
//                      collective group (bf16 preferred, else the dtype with most points).
#include <map>
#include <tuple>
#include <vector>

#include "export_common.h"

namespace gpucal::calibration {

using nlohmann::json;

ExportReport export_nersc(const json& calibration, const std::string& out_dir) {
  ExportReport report;
  report.consumer = "nersc";
  const std::string dir = ensure_dir(out_dir, "nersc");
  json system;
  system["matrix_flops_fp16"] = nullptr;
  const json& gemm = calibration.at("compute").at("gemm");
  for (const char* dtype : {"bf16", "fp16"}) {
    if (gemm.is_object() && gemm.contains(dtype)) {
      system["matrix_flops_fp16"] = gemm.at(dtype).at("best_tflops");
      report.notes.push_back(std::string("matrix_flops_fp16: best achieved ") + dtype + " GEMM TFLOP/s");
      break;
    }
  }
  if (system["matrix_flops_fp16"].is_null()) report.unfilled.push_back("matrix_flops_fp16: no bf16/fp16 GEMM rows");
  for (const auto& [key, dtypes] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"vector_flops_fp32", {"fp32"}}, {"vector_flops_fp16", {"fp16", "bf16"}}}) {
    system[key] = nullptr;
    for (const auto& dtype : dtypes)
      if (const auto v = vector_rate(calibration, dtype)) {
        system[key] = v->best_tflops;
        report.notes.push_back(key + ": best achieved bench_memory fma_chain " + dtype + " TFLOP/s");
        break;
      }
    if (system[key].is_null()) report.unfilled.push_back(key + ": no bench_memory fma_chain rows");
  }
  system["hbm_bandwidth"] = nullptr;
  if (const auto bw = memory_bandwidth(calibration)) {
    system["hbm_bandwidth"] = bw->gbps;
    report.notes.push_back("hbm_bandwidth: " + bw->source);
  } else {
    report.unfilled.push_back("hbm_bandwidth: no bench_memory copy plateau and no p2p 'copy' d2d rows");
  }
  const auto gib = device_memory_gib(calibration);
  system["hbm_capacity"] = gib ? json(*gib) : json(nullptr);
  if (!gib) report.unfilled.push_back("hbm_capacity: no device memory capacity in the run metadata");

  const std::pair<int, const char*> tiers[] = {{0, "nvlink"}, {1, "ib"}};
  for (const auto& [spans_nodes, prefix] : tiers) {
    const std::string p = prefix;
    const auto tier = select_network_tier(calibration, spans_nodes);
    if (tier) {
      system[p + "_bandwidth"] = tier->beta_gbps;
      system[p + "_eff"] = 1.0;
      system[p + "_latency"] = tier->alpha_us * 1e-6;
      report.notes.push_back(p + "_*: from " + tier->describe());
    } else {
      system[p + "_bandwidth"] = system[p + "_eff"] = system[p + "_latency"] = nullptr;
      report.unfilled.push_back(p + "_bandwidth, " + p + "_eff, " + p + "_latency: no collectives rows with spans_nodes=" +
                                std::to_string(spans_nodes));
    }
    if (spans_nodes == 0) system["nvlink_size"] = tier ? json(tier->tier_size) : json(nullptr);
  }
  if (system["nvlink_size"].is_null()) report.unfilled.push_back("nvlink_size: no intra-node collectives rows");
  system["nic_factor"] = nullptr;
  report.unfilled.push_back("nic_factor: NICs per GPU are not measured");
  write_text_file(dir + "/system.json", system.dump(2) + "\n");
  report.files_written.push_back(dir + "/system.json");

  // Sigmoid fits: one per (collective, ranks_per_node, nnodes), preferring bf16.
  std::map<std::tuple<std::string, int64_t, int64_t>, const json*> chosen;
  for (const json& g : calibration.at("communication").at("collectives")) {
    if (!g.contains("sigmoid") || g.at("sigmoid").contains("error")) continue;
    const auto key = std::make_tuple(g.at("collective").get<std::string>(), g.at("ranks_per_node").get<int64_t>(),
                                     g.at("nnodes").get<int64_t>());
    const json*& current = chosen[key];
    auto rank = [](const json& x) { return std::make_pair(x.at("dtype") == "bf16" ? 1 : 0, x.at("points").size()); };
    if (!current || rank(g) > rank(*current)) current = &g;
  }
  if (chosen.empty()) {
    report.unfilled.push_back("comm_sigmoid_fits.json: no collectives group with a sigmoid fit (needs " +
                              std::to_string(5) + "+ sizes)");
  } else {
    json fits = json::object();
    for (const auto& [key, g] : chosen) {
      const json& s = (*g).at("sigmoid");
      fits[std::get<0>(key)][std::to_string(std::get<1>(key))][std::to_string(std::get<2>(key))] = {
          s.at("H_gbps"), s.at("k_per_log2_byte"), s.at("x0_log2_bytes"), s.at("y0_gbps")};
    }
    write_text_file(dir + "/comm_sigmoid_fits.json", fits.dump(2) + "\n");
    report.files_written.push_back(dir + "/comm_sigmoid_fits.json");
    report.notes.push_back("comm_sigmoid_fits.json: bus bandwidth GB/s against log2(size_bytes), [H, k, x0, y0]");
  }
  return report;
}

}  // namespace gpucal::calibration
