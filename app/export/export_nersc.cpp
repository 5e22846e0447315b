// NERSC transformer-perf-estimates (54278b0) system JSON, <out>/nersc/system.json: every key of the
// tool's systems/config-*.json, all numbers (its code reads each, ib_* even on one node). Units
// follow its formulas (estimates.py): volumes in GB (element_size = bytes per element x 1e-9),
// flops in TFLOP (flops_units 1e-12), rates in TFLOP/s and GB/s, latencies in s.
//   t_op   = max(20 µs + flops / (0.8·matrix_flops_fp16), bytes / hbm_bandwidth) + t_comm
//            (vector_flops_fp16 instead of matrix for non-tensor-core ops)
//   t_comm one node:  nvlink_latency·(n-1) + (n-1)/n · vol / (nvlink_bandwidth·nvlink_eff), for
//                     allreduce too (no factor 2)
//          k nodes of t GPUs: 2 (allreduce) x max((n-1)/n·vol/(nic_factor·t·ib_bandwidth·ib_eff),
//                     (n-1)/n·vol/(nvlink_bandwidth·nvlink_eff)) + ib_latency·(k-1) + nvlink_latency·(n-k)
// The values written make those formulas give our measured times (see each note). The older
// sigmoid-fit file has no reader in this commit and is not written (the fits stay in calibration.json).
#include <cmath>

#include "app/export/export_comm.h"
#include "app/common/calibration_schema.h"
#include "app/common/number_text.h"
#include "app/export/export_common.h"
#include "app/export/export_figures.h"
#include "app/export/workload_refit.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

constexpr double kNerscOpOverheadS = 20e-6;   // estimates.py get_time_flops: 20 * 1E-6 + ...
constexpr double kNerscFlopEfficiency = 0.8;  // estimates.py: hardware_flops *= 0.8

// matrix_flops_fp16 from the reference GEMM, undoing the tool's 0.8 and 20 µs; element_size.
void matrix_rate(const json& calibration, ExportReport& report, json& system) {
  const auto dtype = preferred_matrix_dtype(calibration);
  const auto gemm = dtype ? reference_gemm(calibration, *dtype) : std::nullopt;
  const int elem = dtype ? dtype_size_bytes(*dtype).value_or(0) : 0;
  if (!gemm || elem == 0) {
    report.refused.push_back(
        missing_figure("matrix_flops_fp16", "no GEMM rows" + left_out_as_suspect(calibration, "gemm"), "bench_gemm (gpucal run)", "", ""));
    return;
  }
  if (gemm->time_us * 1e-6 <= kNerscOpOverheadS) {
    report.refused.push_back(
        missing_figure("matrix_flops_fp16",
                       "every measured GEMM takes less than the tool's fixed 20 us per op, so "
                       "no rate reproduces it",
                       "bench_gemm with larger shapes (--m 8192 --n 8192 --k 8192)", "", ""));
    return;
  }
  // The tool counts m·n·(k mults + (k-1) adds) per GEMM; bench_gemm counts 2·m·n·k.
  const double flops_tool = gemm->flops * (2.0 * gemm->k - 1) / (2.0 * gemm->k);
  const double rate_tflops =
      flops_tool * 1e-12 / (kNerscFlopEfficiency * (gemm->time_us * 1e-6 - kNerscOpOverheadS));
  system["matrix_flops_fp16"] = rate_tflops;
  report.notes.push_back(
      "matrix_flops_fp16 = " + significant(rate_tflops, 4) + " TFLOP/s (our achieved " +
      significant(gemm->tflops, 4) +
      "): the rate at which the tool's 20 us + m·n·(2k-1) / (0.8 x rate) equals our measured " +
      gemm->describe() + " (" + *dtype + "); other GEMMs get this rate plus 20 us each");
  system["element_size"] = elem * 1e-9;
  report.notes.push_back("element_size = " + format_number(elem * 1e-9) + ": bytes per " + *dtype +
                         " element in GB, the tool's volume unit (hbm_bandwidth is GB/s)");
}

// The tool's units and settings, not measurements.
void tool_settings(ExportReport& report, json& system) {
  system["mask_element_size"] = 1e-9;
  system["flops_units"] = 1e-12;
  system["empirical"] = false;
  system["summa_nb"] = 4;
  report.assumed.push_back(
      "mask_element_size = 1e-9 (one byte per mask element, GB), flops_units = 1e-12 (flops in "
      "TFLOP, as matrix_flops_fp16 is TFLOP/s): the tool's units");
  report.assumed.push_back(
      "empirical = false (the tool's measured-table path reads a file it does not ship); "
      "summa_nb = 4 (its default; its 2D search overwrites it)");
}

// Vector rate (undoing the 0.8; the 20 µs per op cannot be undone by a rate), HBM bandwidth
// and capacity.
void vector_and_hbm(const json& calibration, const ExportSettings& settings, ExportReport& report,
                    json& system) {
  if (const auto v = require_vector_tflops(calibration, settings, {"fp16", "bf16", "fp32"},
                                           "vector_flops_fp16", report.refused)) {
    system["vector_flops_fp16"] = v->value / kNerscFlopEfficiency;
    report.notes.push_back("vector_flops_fp16 = " + significant(v->value / kNerscFlopEfficiency, 4) + " = " +
                           significant(v->value, 4) + " TFLOP/s (" + v->source +
                           ") / 0.8, undoing the tool's 0.8; its 20 us per op stays");
  }
  if (const auto bw = require_memory_bandwidth(calibration, settings, "hbm_bandwidth", report.refused)) {
    system["hbm_bandwidth"] = bw->value;
    report.notes.push_back("hbm_bandwidth = " + significant(bw->value, 4) + " GB/s (" + bw->source +
                           "); the tool divides the bytes an op reads and writes by it");
  }
  if (const auto gib = require_device_memory(calibration, settings, "hbm_capacity", report.refused)) {
    system["hbm_capacity"] = gib->value * 1024.0 * 1024 * 1024 / 1e9;
    report.notes.push_back("hbm_capacity = " + significant(gib->value * 1.073741824, 4) + " GB = " +
                           significant(gib->value, 4) +
                           " GiB (" + gib->source + "); the tool compares it with memory counted in GB");
  }
}

// The NVLink domain's bandwidth (GB/s) and per-step latency (s); 0 when not known.
struct NvlinkFigures {
  double bandwidth_gbps = 0, latency_s = 0;
};

// --set nersc_comm_op=allreduce: the tool's one-node formula made to give our allreduce.
NvlinkFigures nvlink_from_allreduce(const json& calibration, int64_t n, double around, ExportReport& report) {
  const auto ar = collective_figure(calibration, "allreduce", n, 0, around);
  if (!ar) {
    report.refused.push_back(missing_figure("nvlink_bandwidth", "no allreduce fit within a node",
                                            "bench_collectives --collective allreduce", "", ""));
    return {};
  }
  const NvlinkFigures out{ar->busbw_gbps / 2, ar->alpha_us * 1e-6 / static_cast<double>(n - 1)};
  report.notes.push_back(
      "nvlink_bandwidth = allreduce bus bandwidth / 2 = " + significant(out.bandwidth_gbps, 4) +
      " GB/s, nvlink_latency = alpha / (n-1): the tool's one-node allreduce has no factor 2, "
      "so this reproduces our allreduce; its allgather/reduce-scatter then take twice ours. " +
      ar->describe());
  return out;
}

// --set nersc_comm_op=allgather: the tool's one-node formula made to give our `collective` alone.
NvlinkFigures nvlink_from_one(const json& calibration, const std::string& collective, int64_t n, double around,
                              ExportReport& report) {
  const auto f = collective_figure(calibration, collective, n, 0, around);
  if (!f) {
    report.refused.push_back(missing_figure("nvlink_bandwidth", "no " + collective + " fit within a node",
                                            "bench_collectives --collective " + collective, "", ""));
    return {};
  }
  report.notes.push_back("nvlink_bandwidth = " + collective +
                         " bus bandwidth = " + significant(f->busbw_gbps, 4) +
                         " GB/s, nvlink_latency = alpha / (n-1) (nersc_comm_op=" + collective +
                         "): the tool's one-node " + collective + " is ours; " + f->describe());
  return {f->busbw_gbps, f->alpha_us * 1e-6 / static_cast<double>(n - 1)};
}

// The default (nersc_comm_op=allgather_reducescatter): an allgather and a reduce-scatter of one
// volume take our two times together: the harmonic mean of their bus bandwidths (the one
// measured, when only one is).
NvlinkFigures nvlink_from_pair(const json& calibration, int64_t n, double around, ExportReport& report) {
  std::vector<CommFigure> figures;
  for (const char* c : {"allgather", "reduce_scatter"})
    if (auto f = collective_figure(calibration, c, n, 0, around)) figures.push_back(*f);
  if (figures.empty()) {
    report.refused.push_back(
        missing_figure("nvlink_bandwidth", "no allgather or reduce_scatter fit within a node",
                       "bench_collectives --collective allgather,reduce_scatter", "", ""));
    return {};
  }
  double inverse = 0, alpha = 0;
  std::string sources;
  for (const auto& f : figures) {
    inverse += 1.0 / f.busbw_gbps / static_cast<double>(figures.size());
    alpha += f.alpha_us / static_cast<double>(figures.size());
    sources += "; " + f.describe();
  }
  const NvlinkFigures out{1.0 / inverse, alpha * 1e-6 / static_cast<double>(n - 1)};
  report.notes.push_back(
      "nvlink_bandwidth = " + significant(out.bandwidth_gbps, 4) + " GB/s, the harmonic mean of the " +
      (figures.size() == 2 ? "allgather and reduce-scatter" : figures[0].collective) +
      " bus bandwidths, and nvlink_latency = their mean alpha / (n-1): the tool's one-node "
      "time is nvlink_latency·(n-1) + (n-1)/n·vol/bandwidth" +
      sources);
  if (figures.size() == 2)
    report.notes.push_back(
        "nersc_comm_op=allgather_reducescatter (the default): the tool reproduces the SUM of our allgather and "
        "reduce-scatter of one volume, not each: at large sizes its allgather takes " +
        significant(figures[0].busbw_gbps / out.bandwidth_gbps, 4) + "x ours and its reduce-scatter " +
        significant(figures[1].busbw_gbps / out.bandwidth_gbps, 4) +
        "x (--set nersc_comm_op=allgather reproduces the allgather alone)");
  if (const auto ar = collective_figure(calibration, "allreduce", n, 0, around))
    report.notes.push_back("the tool's one-node allreduce has no factor 2: it predicts " +
                           significant(100.0 * ar->busbw_gbps / (2 * out.bandwidth_gbps), 4) +
                           "% of our allreduce time at large sizes (--set nersc_comm_op=allreduce matches "
                           "allreduce instead)");
  return out;
}

// The NVLink domain's keys. Returns nvlink_latency (s), which the inter-node latency is
// corrected by.
double nvlink_tier(const json& calibration, const ExportSettings& settings, const NodeSize& node,
                   double around, ExportReport& report, json& system) {
  const int64_t gpn = node.gpus;
  const int64_t n = static_cast<int64_t>(settings.number("intra_group").value_or(static_cast<double>(gpn)));
  const std::string op = settings.word("nersc_comm_op").value_or("allgather_reducescatter");
  NvlinkFigures nvlink;
  if (gpn < 2 || n < 2)
    report.refused.push_back(
        missing_figure("nvlink_size, nvlink_bandwidth", "no collectives measured within a node",
                       "bench_collectives (gpucal run --threads N, or under a launcher)", "", ""));
  else if (op == "allreduce")
    nvlink = nvlink_from_allreduce(calibration, n, around, report);
  else if (op == "allgather")
    nvlink = nvlink_from_one(calibration, "allgather", n, around, report);
  else
    nvlink = nvlink_from_pair(calibration, n, around, report);
  if (nvlink.bandwidth_gbps > 0) {
    system["nvlink_bandwidth"] = nvlink.bandwidth_gbps;
    system["nvlink_eff"] = 1.0;
    system["nvlink_latency"] = nvlink.latency_s;
    system["nvlink_size"] = gpn;
    report.notes.push_back("nvlink_size = " + std::to_string(gpn) + " GPUs (" + node.source +
                           "); nvlink_eff = 1.0 since the bandwidth is achieved; figures taken at " +
                           std::to_string(n) + " GPUs serve every group size");
  }
  return nvlink.latency_s;
}

// ib_bandwidth and ib_latency from the measured inter-node allreduce.
void ib_from_measured(const json& calibration, int64_t group, double nic, double nvlink_lat, double around,
                      ExportReport& report, json& system) {
  const auto ar = collective_figure(calibration, "allreduce", group, 1, around);
  if (!ar) {
    report.refused.push_back(missing_figure("ib_bandwidth", "no allreduce fit across nodes",
                                            "bench_collectives across nodes", "inter_busbw_gbps", "25"));
    return;
  }
  const int64_t N = ar->nranks_asked, k = ar->group.value("nnodes", int64_t{2}),
                t = ar->group.value("ranks_per_node", int64_t{1});
  system["ib_bandwidth"] = ar->busbw_gbps / (nic * static_cast<double>(t));
  double ib_lat =
      (ar->alpha_us * 1e-6 - nvlink_lat * static_cast<double>(N - k)) / static_cast<double>(k - 1);
  if (ib_lat < 0) {
    report.notes.push_back(
        "ib_latency clamped to 0: the inter-node alpha is below nvlink_latency x (n - nodes)");
    ib_lat = 0;
  }
  system["ib_latency"] = ib_lat;
  report.notes.push_back("ib_bandwidth = inter-node allreduce bus bandwidth / (nic_factor x " +
                         std::to_string(t) +
                         " GPUs per node), so the tool's 2·(n-1)/n·vol/(nic_factor·t·ib_bandwidth) is our "
                         "allreduce; ib_latency = (alpha - nvlink_latency·(n-k)) / (k-1). " +
                         ar->describe());
}

// Inter-node: ib_bandwidth is per NIC; the tool multiplies it by nic_factor x GPUs per node.
void ib_tier(const json& calibration, const ExportSettings& settings, int64_t gpn, double nvlink_lat,
             double around, ExportReport& report, json& system) {
  const double nic = settings.number("nic_factor").value_or(1.0);
  if (!settings.has("nic_factor"))
    report.assumed.push_back(
        "nic_factor = 1 NIC per GPU; ib_bandwidth is divided by it, so the tool's product (our "
        "measured bandwidth) does not depend on it for full nodes");
  const auto inter = measured_inter_node(calibration);
  const auto by_hand_bw = settings.number("inter_busbw_gbps");
  if (by_hand_bw) {
    const auto alpha = settings.number("inter_alpha_us");
    if (!alpha)
      report.refused.push_back(missing_figure("ib_latency", "inter_busbw_gbps was set without a latency",
                                              "bench_collectives across nodes", "inter_alpha_us", "20"));
    system["ib_bandwidth"] = *by_hand_bw / (nic * static_cast<double>(std::max<int64_t>(gpn, 1)));
    system["ib_latency"] = alpha.value_or(0) * 1e-6;
    report.notes.push_back(
        "ib_bandwidth = inter_busbw_gbps / (nic_factor x gpus_per_node), ib_latency = "
        "inter_alpha_us (--set)");
  } else if (inter) {
    const int64_t group = static_cast<int64_t>(settings.number("inter_group").value_or(inter->nranks));
    ib_from_measured(calibration, group, nic, nvlink_lat, around, report, system);
  } else {
    report.refused.push_back(
        missing_figure("ib_bandwidth, ib_latency",
                       "nothing was measured across nodes (the tool reads them even on one node)",
                       "gpucal run under a launcher with ranks on 2+ nodes", "inter_busbw_gbps",
                       "25 --set inter_alpha_us=20"));
  }
  system["ib_eff"] = 1.0;
  system["nic_factor"] = nic;
}

}  // namespace

ExportReport export_nersc(const json& calibration, const ExportSettings& settings,
                          const std::string& out_dir) {
  ExportReport report;
  report.consumer = "nersc";
  const double around = settings.number("comm_bytes").value_or(0);  // the alpha-beta's size window
  json system = json::object();
  matrix_rate(calibration, report, system);
  tool_settings(report, system);
  vector_and_hbm(calibration, settings, report, system);
  // NVLink domain: one node's figures.
  const NodeSize node = gpus_per_node(calibration, settings);
  const double nvlink_lat = nvlink_tier(calibration, settings, node, around, report, system);
  ib_tier(calibration, settings, node.gpus, nvlink_lat, around, report, system);
  if (settings.workload() && report.ok()) refit_nersc(*settings.workload(), node.gpus, system, report);
  write_export(report, out_dir, {{"system.json", system.dump(2) + "\n"}});
  return report;
}

}  // namespace gpucal::calibration
