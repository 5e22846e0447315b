// Calculon (calculon-ai/calculon caa4b11) system JSON, <out>/calculon/system.json. What its code
// requires (calculon/system.py, processor.py, memory.py, network.py, llm/llm.py):
//   matrix, vector   {<dtype>: {tflops, gflops_efficiency: [[GFLOP, eff], ...]}} descending, eff in (0, 1],
//                    an op must meet some threshold; the execution's datatype must be in both
//   mem1, mem2       {GiB, GBps (1e9 B/s), MB_efficiency: [[MB (1e6 B), eff], ...]}; mem2 is used for
//                    offload times even when nothing is offloaded (0 / GBps), so GBps > 0
//   processing_mode  roofline | no_overlap
//   networks[]       exactly {bandwidth (GB/s), efficiency, size, latency (s), ops, must_be_filled,
//                    processor_usage (0 <= u < 1)}; ops = {p2p: [scalar, null], all_reduce,
//                    all_gather, reduce_scatter: [scalar, offset]}; size >= the groups an
//                    execution puts on the tier ("isn't big enough")
// Its time for an op of S bytes (S = the whole buffer, as nccl-tests' S) among n ranks is
//   latency + scalar·S·(1 + offset/n) / (bandwidth·efficiency),
// so with offset -1, bandwidth = the allreduce bus bandwidth B_ar and efficiency 1:
//   all_reduce [2, -1] gives α + S·2(n-1)/n / B_ar, the α–β form of our allreduce fit;
//   all_gather [B_ar/B_ag, -1] and reduce_scatter [B_ar/B_rs, -1] give S·(n-1)/n / B_ag (B_rs),
//   their own fits; p2p [B_ar/B_p2p, null] gives S / B_p2p, the sendrecv fit.
// One latency per tier: the allreduce α (the others' α are in the notes).
#include <sstream>

#include "app/export/export_comm.h"
#include "app/common/calibration_schema.h"
#include "app/common/number_text.h"
#include "app/export/export_common.h"
#include "app/export/export_figures.h"
#include "app/export/workload_refit.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

struct TierInput {
  int spans_nodes = 0;
  double around_bytes = 0;  // --set comm_bytes
  int64_t size = 0;         // GPUs the tier holds (Calculon's networks[].size)
  int64_t group = 0;        // the group size its figures are taken at
  int64_t ranks_per_node = 0;  // of that group across nodes (0: as measured)
  bool must_be_filled = false;
};

// NOTES.md's first line: why networks[0].latency is not the Calibration table's alpha_us.
std::string latency_lead(const CommFigure& ar, double around_bytes) {
  const std::string line = "the allreduce line through the communication model's times " +
                           (around_bytes > 0 ? "at comm_bytes (" + std::to_string(static_cast<int64_t>(around_bytes)) +
                                                   " B) and the measured size below it"
                                             : std::string("at the two largest measured sizes (the bandwidth end)"));
  const std::string not_alpha = "not the Calibration table's alpha_us (the alpha-beta fit over every size, which the "
                                "small messages set).";
  if (ar.alpha_us > 0)
    return "networks[0].latency (" + significant(ar.alpha_us, 6) + " us) is the intercept of " + line + ", " + not_alpha;
  return "networks[0].latency is 0: " + line + " has a negative intercept; it is " + not_alpha;
}

// One networks[] entry from the measured fits of the tier, or nullopt with refusals recorded.
std::optional<json> measured_tier(const json& calibration, const TierInput& t, double processor_usage,
                                  ExportReport& report) {
  const std::string name = "networks[" + std::to_string(t.spans_nodes) + "]";
  const double around = t.around_bytes;
  const auto ar = collective_figure(calibration, "allreduce", t.group, t.spans_nodes, around, {"bf16", "fp16", "fp32"},
                                        t.ranks_per_node);
  const auto ag = collective_figure(calibration, "allgather", t.group, t.spans_nodes, around, {"bf16", "fp16", "fp32"},
                                        t.ranks_per_node);
  const auto rs = collective_figure(calibration, "reduce_scatter", t.group, t.spans_nodes, around, {"bf16", "fp16", "fp32"},
                                        t.ranks_per_node);
  const auto p2p = p2p_figure(calibration, t.spans_nodes, around);
  const std::string where = t.spans_nodes ? " across nodes" : " within a node";
  if (!ar)
    report.refused.push_back(missing_figure(name + ".bandwidth/latency", "no allreduce fit" + where,
                                            std::string(kCollectivesRun) + " --collective allreduce", "",
                                            ""));
  if (!ag)
    report.refused.push_back(missing_figure(name + ".ops.all_gather", "no allgather fit" + where,
                                            std::string(kCollectivesRun) + " --collective allgather", "",
                                            ""));
  if (!rs)
    report.refused.push_back(missing_figure(name + ".ops.reduce_scatter", "no reduce_scatter fit" + where,
                                            std::string(kCollectivesRun) + " --collective reduce_scatter", "",
                                            ""));
  if (!p2p)
    report.refused.push_back(missing_figure(name + ".ops.p2p", "no sendrecv/pingpong fit" + where,
                                            "bench_p2p --pattern sendrecv (gpucal run)", "", ""));
  if (!ar || !ag || !rs || !p2p) return std::nullopt;
  const double bw = ar->busbw_gbps;
  json net{{"bandwidth", bw},
           {"efficiency", 1.0},
           {"size", t.size},
           {"latency", ar->alpha_us * 1e-6},
           {"ops",
            {{"p2p", {bw / p2p->busbw_gbps, nullptr}},
             {"all_reduce", {2.0, -1}},
             {"all_gather", {bw / ag->busbw_gbps, -1}},
             {"reduce_scatter", {bw / rs->busbw_gbps, -1}}}},
           {"must_be_filled", t.must_be_filled},
           {"processor_usage", processor_usage}};
  for (const auto* f : {&*ar, &*ag, &*rs, &*p2p}) report.notes.push_back(name + ": " + f->describe());
  std::ostringstream lat;
  lat << name << ".latency = allreduce alpha " << ar->alpha_us << " us; Calculon has one latency per tier, "
      << "while allgather alpha = " << ag->alpha_us << " us, reduce_scatter alpha = " << rs->alpha_us
      << " us, p2p one-way alpha = " << p2p->alpha_us << " us";
  report.notes.push_back(lat.str());
  if (t.spans_nodes == 0) report.lead = latency_lead(*ar, around);
  report.notes.push_back(name + ": the figures at " + std::to_string(t.group) +
                         " GPUs serve every group size on the tier (Calculon scales only by (n-1)/n)");
  return net;
}

// matrix: each GEMM dtype Calculon knows (System.TypeSizes).
json matrix_table(const json& calibration, ExportReport& report) {
  json matrix = json::object();
  const json gemm = calibration.contains("compute") && calibration["compute"].is_object()
                        ? calibration["compute"].value("gemm", json())
                        : json();
  if (gemm.is_object())
    for (const auto& [dtype, table] : gemm.items()) {
      const std::string name = calculon_dtype_name(dtype);
      if (name != "float8" && name != "float16" && name != "bfloat16" && name != "float32") {
        report.notes.push_back("matrix: " + dtype +
                               " GEMM rows skipped (Calculon types: float8, float16, bfloat16, "
                               "float32)");
        continue;
      }
      if (!table.contains("reference_tflops") || !table.contains("gflops_efficiency")) continue;
      matrix[name] = {{"tflops", table["reference_tflops"]},
                      {"gflops_efficiency", step_table_floor_zero(table["gflops_efficiency"])}};
    }
  if (matrix.empty())
    report.refused.push_back(missing_figure("matrix", "no GEMM rows of a Calculon dtype" + left_out_as_suspect(calibration, "gemm"),
                                            "bench_gemm (gpucal run --suite calibration)", "", ""));
  else
    report.notes.push_back(
        "matrix.<dtype>: tflops = the GEMM efficiency reference (recorded peak, else best "
        "achieved); gflops_efficiency = median efficiency per power-of-two GFLOP bucket, smallest "
        "threshold 0");
  return matrix;
}

// vector: one entry per matrix dtype (the execution's datatype must be in both), from that
// dtype's fma_chain, else another measured dtype's (said so).
json vector_table(const json& calibration, const ExportSettings& settings, const json& matrix,
                  ExportReport& report) {
  json vector_json = json::object();
  for (const auto& [name, unused] : matrix.items()) {
    (void)unused;
    const std::string own = name == "bfloat16"  ? "bf16"
                            : name == "float16" ? "fp16"
                            : name == "float32" ? "fp32"
                                                : "fp8";
    const auto v = require_vector_tflops(calibration, settings, {own, "bf16", "fp16", "fp32"},
                                         "vector." + name + ".tflops", report.refused);
    if (!v) break;
    vector_json[name] = {{"tflops", v->value}, {"gflops_efficiency", json::array({json::array({0, 1.0})})}};
    report.notes.push_back("vector." + name + ".tflops = " + format_number(v->value) + " (" + v->source +
                           ")");
    if (!v->by_hand && v->source.find("fma_chain " + own + " ") == std::string::npos)
      report.assumed.push_back("vector." + name + ".tflops: no " + own +
                               " fma_chain rows, another dtype's rate");
  }
  if (!vector_json.empty())
    report.assumed.push_back(
        "vector.<dtype>.gflops_efficiency = [[0, 1.0]]: fma_chain is one size, so one rate for "
        "every op size");
  return vector_json;
}

// mem1: device memory.
void add_mem1(const json& calibration, const ExportSettings& settings, ExportReport& report, json& system) {
  const auto mem_bw = require_memory_bandwidth(calibration, settings, "mem1.GBps", report.refused);
  const auto mem_gib = require_device_memory(calibration, settings, "mem1.GiB", report.refused);
  if (!mem_bw || !mem_gib) return;
  system["mem1"] = {{"GiB", mem_gib->value},
                    {"GBps", mem_bw->value},
                    {"MB_efficiency", memory_mb_efficiency(calibration, settings)}};
  report.notes.push_back(
      "mem1.GBps = " + format_number(mem_bw->value) + " GB/s (" + mem_bw->source +
      "); Calculon counts every byte an op reads and writes, as the copy's read + write does");
  report.notes.push_back("mem1.GiB = " + format_number(mem_gib->value) + " (" + mem_gib->source + ")");
}

// mem2: the offload tier.
void add_mem2(const ExportSettings& settings, ExportReport& report, json& system) {
  const auto off_bw = settings.number("offload_gbps");
  const auto off_gib = settings.number("offload_gib");
  if (!off_bw)
    report.refused.push_back(
        missing_figure("mem2.GBps",
                       "the offload tier's bandwidth is not in calibration.json (Calculon "
                       "divides by it even when nothing is offloaded)",
                       "bench_p2p --pattern copy --copy-direction h2d,d2h", "offload_gbps", "50"));
  if (!off_gib)
    report.refused.push_back(missing_figure("mem2.GiB",
                                            "the offload tier's capacity (host memory for offload) is "
                                            "not in calibration.json",
                                            "", "offload_gib", "512"));
  if (!off_bw || !off_gib) return;
  system["mem2"] = {
      {"GiB", *off_gib}, {"GBps", *off_bw}, {"MB_efficiency", json::array({json::array({0, 1.0})})}};
  report.notes.push_back("mem2.GBps = " + format_number(*off_bw) +
                         ", mem2.GiB = " + format_number(*off_gib) + " (--set offload_gbps, offload_gib)");
  report.assumed.push_back("mem2.MB_efficiency = [[0, 1.0]]: the set bandwidth for every transfer size");
}

// networks[0]: within a node.
void add_intra_node_tier(const json& calibration, const ExportSettings& settings, const NodeSize& node, double usage,
                         ExportReport& report, json& networks) {
  const int64_t gpus_per_node = node.gpus;
  if (gpus_per_node < 2) {
    report.refused.push_back(
        missing_figure("networks[0]", "no collectives measured within a node", kCollectivesRun, "", ""));
    return;
  }
  const TierInput t0{.spans_nodes = 0,
                     .around_bytes = settings.number("comm_bytes").value_or(0),
                     .size = gpus_per_node,
                     .group = static_cast<int64_t>(settings.number("intra_group").value_or(gpus_per_node)),
                     .must_be_filled = true};
  if (const auto net = measured_tier(calibration, t0, usage, report)) networks.push_back(*net);
  report.notes.push_back("networks[0].size = " + std::to_string(gpus_per_node) + " GPUs per node (" +
                         node.source + ")");
  report.assumed.push_back(
      "networks[0].must_be_filled = true, networks[1].must_be_filled = false: as Calculon's "
      "own systems (a tensor-parallel group fills the node)");
}

// networks[1] by hand (--set inter_busbw_gbps, inter_alpha_us).
json inter_node_tier_by_hand(const ExportSettings& settings, double bus_gbps, int64_t size, double usage,
                             ExportReport& report) {
  const auto alpha = settings.number("inter_alpha_us");
  if (!alpha)
    report.refused.push_back(missing_figure("networks[1].latency", "inter_busbw_gbps was set without a latency",
                                            "bench_collectives across nodes", "inter_alpha_us", "20"));
  report.assumed.push_back(
      "networks[1] by hand (--set inter_busbw_gbps, inter_alpha_us): one bus bandwidth "
      "for every op, p2p at that bandwidth");
  return {{"bandwidth", bus_gbps},
          {"efficiency", 1.0},
          {"size", size},
          {"latency", alpha.value_or(0) * 1e-6},
          {"ops",
           {{"p2p", {1.0, nullptr}}, {"all_reduce", {2.0, -1}}, {"all_gather", {1.0, -1}}, {"reduce_scatter", {1.0, -1}}}},
          {"must_be_filled", false},
          {"processor_usage", usage}};
}

// networks[1]: across nodes, measured or by hand; none when neither.
void add_inter_node_tier(const json& calibration, const ExportSettings& settings, int64_t gpus_per_node, double usage,
                         ExportReport& report, json& networks) {
  const auto inter = measured_inter_node(calibration);
  const auto by_hand_bw = settings.number("inter_busbw_gbps");
  if (!inter && !by_hand_bw) {
    report.notes.push_back(
        "no inter-node tier: nothing was measured across nodes, so an execution must put every "
        "group on networks[0] (tensor_par_net = pipeline_par_net = data_par_net = 0); measure "
        "across nodes or pass --set inter_busbw_gbps=... --set inter_alpha_us=... --set nodes=...");
    return;
  }
  const auto nodes = settings.number("nodes");
  if (!nodes)
    report.refused.push_back(
        missing_figure("networks[1].size",
                       "the size of the machine you model is not a measurement (Calculon "
                       "refuses executions larger than the tier)",
                       "", "nodes", "64"));
  const int64_t size = static_cast<int64_t>(nodes.value_or(0)) * gpus_per_node;
  if (inter && !by_hand_bw) {
    const TierInput t1{
        .spans_nodes = 1,
        .around_bytes = settings.number("comm_bytes").value_or(0),
        .size = size,
        // The group Calculon's largest inter-node collective spans: the whole modelled machine
        // (the communication models extrapolate the measured inter-node group to it).
        .group = static_cast<int64_t>(
            settings.number("inter_group").value_or(size >= 2 ? static_cast<double>(size) : inter->nranks)),
        .ranks_per_node = gpus_per_node,
        .must_be_filled = false};
    if (const auto net = measured_tier(calibration, t1, usage, report)) networks.push_back(*net);
  } else {
    networks.push_back(inter_node_tier_by_hand(settings, *by_hand_bw, size, usage, report));
  }
  report.notes.push_back("networks[1].size = nodes x gpus_per_node = " + std::to_string(size));
}

// networks: tier 0 within a node, tier 1 across nodes.
json networks_list(const json& calibration, const ExportSettings& settings, ExportReport& report) {
  const auto processor_usage = settings.number("processor_usage");
  if (!processor_usage)
    report.refused.push_back(
        missing_figure("networks[].processor_usage",
                       "the compute a collective takes while overlapped is not measured by any "
                       "gpucal bench",
                       "", "processor_usage", "0.05"));
  const double usage = processor_usage.value_or(0);
  const NodeSize node = gpus_per_node(calibration, settings);
  json networks = json::array();
  add_intra_node_tier(calibration, settings, node, usage, report, networks);
  add_inter_node_tier(calibration, settings, node.gpus, usage, report, networks);
  if (processor_usage)
    report.notes.push_back("networks[].processor_usage = " + format_number(usage) + " (--set processor_usage)");
  return networks;
}

}  // namespace

ExportReport export_calculon(const json& calibration, const ExportSettings& settings,
                             const std::string& out_dir) {
  ExportReport report;
  report.consumer = "calculon";
  json system = json::object();
  const json matrix = matrix_table(calibration, report);
  system["matrix"] = matrix;
  system["vector"] = vector_table(calibration, settings, matrix, report);
  add_mem1(calibration, settings, report, system);
  add_mem2(settings, report, system);
  system["processing_mode"] = "roofline";
  report.assumed.push_back(
      "processing_mode = roofline: our GEMM and memory figures are achieved rates that already "
      "include the other's cost, so max(flop time, memory time), not their sum");
  system["networks"] = networks_list(calibration, settings, report);
  if (settings.workload() && report.ok()) {
    refit_calculon(*settings.workload(), system, report);
    report.lead = "networks[0].latency is fitted to the step's messages (--model: Workload-aware fields below), not "
                  "the Calibration table's alpha_us (the alpha-beta fit over every size, which the small messages set).";
  }
  write_export(report, out_dir, {{"system.json", system.dump(2) + "\n"}});
  return report;
}

}  // namespace gpucal::calibration
