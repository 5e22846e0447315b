// ASTRA-sim (c0cf6d6) inputs for its analytical network backend, <out>/astrasim/network.yml and
// system.json. What its code requires:
//   network.yml (extern/network_backend/analytical/common/network-parser/NetworkParser.cpp): lists
//     topology (Ring | Switch | FullyConnected), npus_count (int > 1), bandwidth (> 0), latency
//     (>= 0), one entry per dimension; bandwidth is per link and read as GiB/s (x 2^30 B/s,
//     common/NetworkFunction.cpp), latency in ns per hop (a Switch path is 2 hops).
//   system.json (astra-sim/system/Sys.cc initialize_sys): typed reads, so a null aborts;
//     local-mem-bw GB/s (x 1e9; also the reduction cost of every received chunk), peak-perf
//     TFLOP/s (x 1e12; the roofline of compute nodes).
// Its ring allreduce over n NPUs of one Switch dimension (preferred-dataset-splits 1) sends 2(n-1)
// messages of S/n bytes, each taking 2·latency + (S/n)/bandwidth, and reduces each of the first
// n-1 received chunks at 3 x chunk / local-mem-bw (PacketBundle.cc: write + 2 reads), so
//   T = 4(n-1)·latency + 2(n-1)/n·S/bandwidth + 3(n-1)/n·S/local-mem-bw.
// Our measured allreduce time already holds its reduction, so, with B our bus bandwidth:
//   1/bandwidth = 1/B - 1.5/local-mem-bw,  latency = α / (4(n-1)),  written in GiB/s (x 1e9/2^30).
// Across dimensions it runs the collective hierarchically (reduce-scatter in dimension 0, allreduce
// of S/n0 in dimension 1, allgather in dimension 0) and adds those intra-node stages itself, so
// the inter-node link gets what remains of our measured inter-node allreduce (n = n0·n1) after
// them (the reductions over both dimensions again cost 3(n-1)/n·S/local-mem-bw):
//   2(n-1)/n / B_inter = 2(n0-1)/n0 / B0_link + 2(n1-1)/n1 / (n0·B1_link) + 3(n-1)/n / local-mem-bw.
// Checked against the simulator's output (tests/perf/check_exports_with_tools.sh). All-gather's
// comm_size in an ASTRA-sim workload is the per-rank input (nccl-tests' S / n).
#include <cmath>
#include <sstream>

#include "app/export/export_comm.h"
#include "app/common/calibration_schema.h"
#include "app/export/export_common.h"
#include "app/export/export_figures.h"
#include "app/export/workload_refit.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

std::string yaml_list(const std::vector<std::string>& v) {
  std::string s = "[ ";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s + " ]";
}

struct Dimension {
  int64_t npus = 0;
  double bandwidth_gbps = 0;  // per link, GB/s (1e9)
  double hop_latency_ns = 0;
};

// Dimension 0: one node, from the intra-node allreduce; nullopt (with the refusal) when there
// is none or ASTRA-sim's reductions alone take longer.
std::optional<Dimension> intra_node_dimension(const json& calibration, const NodeSize& node, double around,
                                              double reduce_s_per_byte, ExportReport& report) {
  const int64_t n0 = node.gpus;
  if (n0 < 2) {
    report.refused.push_back(missing_figure("network dimension 0", "no collectives measured within a node",
                                            kCollectivesRun, "", ""));
    return std::nullopt;
  }
  const auto ar = collective_figure(calibration, "allreduce", n0, 0, around);
  if (!ar) {
    report.refused.push_back(missing_figure("network dimension 0", "no allreduce fit within a node",
                                            std::string(kCollectivesRun) + " --collective allreduce", "",
                                            ""));
    return std::nullopt;
  }
  const double inverse = 1.0 / (ar->busbw_gbps * 1e9) - 1.5 * reduce_s_per_byte;  // s per link byte
  if (!(inverse > 0)) {
    report.refused.push_back(
        missing_figure("network dimension 0 bandwidth",
                       "the allreduce is faster than ASTRA-sim's reduction at local-mem-bw "
                       "alone allows",
                       "bench_memory (the device's memory bandwidth)", "memory_gbps", "3000"));
    return std::nullopt;
  }
  const Dimension dim{n0, 1.0 / inverse / 1e9, ar->alpha_us * 1e3 / (4.0 * static_cast<double>(n0 - 1))};
  report.notes.push_back("dimension 0 (" + std::to_string(n0) + " NPUs per node" + ", " + node.source +
                         "): bandwidth " + format_number(dim.bandwidth_gbps) +
                         " GB/s per link = 1 / (1/B - 1.5/local-mem-bw) "
                         "with B the allreduce bus bandwidth " +
                         format_number(ar->busbw_gbps) +
                         " GB/s, so ring steps plus ASTRA-sim's reductions take our time; latency = alpha / "
                         "(4(n-1)) ns per hop (2(n-1) ring steps of 2 Switch hops); " +
                         ar->describe());
  report.notes.push_back(
      "dimension 0: allgather and reduce-scatter use the same link (ASTRA-sim has one "
      "bandwidth per dimension); allgather has no reduction, so it runs faster than the "
      "allreduce-derived link suggests");
  return dim;
}

// The inter-node allreduce dimension 1 is derived from: its bus bandwidth (0: none), alpha and
// shape (nodes, ranks per node).
struct InterNodeAllreduce {
  double busbw = 0, alpha_us = 0;
  int64_t n1_measured = 0, n0_measured = 0;
};

InterNodeAllreduce inter_node_allreduce(const json& calibration, const ExportSettings& settings, int64_t n0,
                                        int64_t inter_nranks, double around, ExportReport& report) {
  InterNodeAllreduce out{.n0_measured = n0};
  if (const auto by_hand_bw = settings.number("inter_busbw_gbps")) {
    out.busbw = *by_hand_bw;
    out.alpha_us = settings.number("inter_alpha_us").value_or(0);
    out.n1_measured = static_cast<int64_t>(settings.number("nodes").value_or(2));
    if (!settings.has("inter_alpha_us"))
      report.refused.push_back(missing_figure("network dimension 1 latency",
                                              "inter_busbw_gbps was set without "
                                              "a latency",
                                              "bench_collectives across nodes", "inter_alpha_us", "20"));
    report.notes.push_back(
        "dimension 1 from --set inter_busbw_gbps, inter_alpha_us (an allreduce over nodes of " +
        std::to_string(n0) + " GPUs)");
  } else if (const auto ar = collective_figure(calibration, "allreduce", inter_nranks, 1, around)) {
    out.busbw = ar->busbw_gbps;
    out.alpha_us = ar->alpha_us;
    out.n1_measured = ar->group.value("nnodes", int64_t{2});
    out.n0_measured = ar->group.value("ranks_per_node", n0);
    report.notes.push_back("dimension 1: " + ar->describe());
    if (out.n0_measured != n0)
      report.notes.push_back("the inter-node group has " + std::to_string(out.n0_measured) +
                             " ranks per node, "
                             "dimension 0 has " +
                             std::to_string(n0) + ": dimension 1 is derived with " +
                             std::to_string(out.n0_measured));
  } else {
    report.refused.push_back(missing_figure("network dimension 1", "no allreduce fit across nodes",
                                            "bench_collectives across nodes", "inter_busbw_gbps", "25"));
  }
  return out;
}

// Dimension 1: across nodes, what remains of the inter-node allreduce after dimension 0's stages.
std::optional<Dimension> inter_node_dimension(const ExportSettings& settings, const Dimension& dim0,
                                              const InterNodeAllreduce& ar, double reduce_s_per_byte,
                                              ExportReport& report) {
  if (!(ar.busbw > 0)) return std::nullopt;
  const double a = static_cast<double>(ar.n0_measured), b = static_cast<double>(ar.n1_measured), n = a * b;
  const double dim0_term = 2 * (a - 1) / a / dim0.bandwidth_gbps;  // per GB/s: s·1e9 per byte
  const double remaining = 2 * (n - 1) / n / ar.busbw - dim0_term - 3 * (n - 1) / n * reduce_s_per_byte * 1e9;
  if (!(remaining > 0)) {
    report.refused.push_back(
        missing_figure("network dimension 1 bandwidth",
                       "the inter-node allreduce is not slower than its intra-node stages "
                       "alone, so no inter-node link bandwidth reproduces it",
                       "bench_collectives across nodes", "inter_busbw_gbps", "25"));
    return std::nullopt;
  }
  const double link_gbps = 2 * (b - 1) / b / (a * remaining);
  double hop_ns = (ar.alpha_us * 1e3 - 4 * (a - 1) * dim0.hop_latency_ns) / (4 * (b - 1));
  if (hop_ns < 0) {
    report.notes.push_back(
        "dimension 1 latency clamped to 0: the inter-node alpha is below the intra-node "
        "stages' latency");
    hop_ns = 0;
  }
  const auto nodes = settings.number("nodes");
  const int64_t n1 = nodes ? static_cast<int64_t>(*nodes) : ar.n1_measured;
  report.notes.push_back("dimension 1 bandwidth = " + format_number(link_gbps) +
                         " GB/s per link: 2(n-1)/n / B_inter = 2(n0-1)/n0 / B0_link + 2(n1-1)/n1 / (n0 "
                         "B1_link) + 3(n-1)/n / local-mem-bw, since ASTRA-sim adds the intra-node "
                         "reduce-scatter and allgather and the reductions itself; latency = (alpha - 4(n0-1) "
                         "latency0) / (4(n1-1))");
  report.notes.push_back("npus_count[1] = " + std::to_string(n1) + " nodes" +
                         (nodes ? " (--set nodes)"
                                : " (the measured ones; --set nodes=N for the machine you "
                                  "model)"));
  return Dimension{n1, link_gbps, hop_ns};
}

// The network's dimensions: one node, then across nodes when measured or set by hand.
std::vector<Dimension> network_dimensions(const json& calibration, const ExportSettings& settings,
                                          double reduce_s_per_byte, double around, ExportReport& report) {
  std::vector<Dimension> dims;
  const NodeSize node = gpus_per_node(calibration, settings);
  const auto dim0 = intra_node_dimension(calibration, node, around, reduce_s_per_byte, report);
  if (!dim0) return dims;
  dims.push_back(*dim0);
  if (settings.number("nodes") == 1.0) {  // one node modelled: the inter-node figures do not enter
    report.notes.push_back("one dimension: --set nodes=1 models one node" +
                           std::string(settings.has("inter_busbw_gbps") ? " (--set inter_busbw_gbps is not used)" : ""));
    return dims;
  }
  const auto inter = measured_inter_node(calibration);
  if (inter || settings.number("inter_busbw_gbps")) {
    const InterNodeAllreduce ar =
        inter_node_allreduce(calibration, settings, node.gpus, inter ? inter->nranks : 0, around, report);
    if (const auto dim1 = inter_node_dimension(settings, *dim0, ar, reduce_s_per_byte, report))
      dims.push_back(*dim1);
  } else {
    report.notes.push_back(
        "one dimension: nothing was measured across nodes (--set inter_busbw_gbps, "
        "inter_alpha_us and nodes add a second)");
  }
  return dims;
}

// system.json: ring collectives per dimension, the simulator's settings as its examples, the
// memory bandwidth and the compute roofline.
json system_json(const json& calibration, std::size_t ndims, const std::optional<Figure>& mem,
                 ExportReport& report) {
  const json ring(std::vector<std::string>(ndims, "ring"));
  json system{{"scheduling-policy", "LIFO"},
              {"endpoint-delay", 10},
              {"active-chunks-per-dimension", 1},
              {"preferred-dataset-splits", 1},
              {"all-reduce-implementation", ring},
              {"all-gather-implementation", ring},
              {"reduce-scatter-implementation", ring},
              {"all-to-all-implementation", ring},
              {"collective-optimization", "localBWAware"},
              {"boost-mode", 0},
              {"roofline-enabled", 1}};
  report.assumed.push_back(
      "topology Switch per dimension and ring collectives (the α–β above is what the Switch "
      "reproduces; edit for Ring/FullyConnected fabrics)");
  report.assumed.push_back(
      "preferred-dataset-splits 1, active-chunks-per-dimension 1: one chunk per collective, "
      "the case the latency above is derived for (k splits pay the latency k times); "
      "endpoint-delay 10 ns as ASTRA-sim's examples (0 trips its event-queue assertion; it "
      "adds ~10 ns per message); scheduling LIFO, localBWAware, boost-mode 0 as its examples");
  if (mem) {
    system["local-mem-bw"] = mem->value;
    report.notes.push_back("local-mem-bw = " + format_number(mem->value) + " GB/s (" + mem->source + ")");
  }
  const auto dtype = preferred_matrix_dtype(calibration);
  if (const auto gemm = dtype ? reference_gemm(calibration, *dtype) : std::nullopt) {
    system["peak-perf"] = gemm->tflops;
    report.notes.push_back("peak-perf = " + format_number(gemm->tflops) +
                           " TFLOP/s, the achieved rate of the reference " + gemm->describe() +
                           ", so the roofline's compute time of that GEMM is ours");
  } else {
    report.refused.push_back(missing_figure("peak-perf", "no GEMM rows" + left_out_as_suspect(calibration, "gemm"), "bench_gemm (gpucal run)", "", ""));
  }
  return system;
}

// network.yml: one Switch entry per dimension.
std::string network_yml(const std::vector<Dimension>& dims, ExportReport& report) {
  std::vector<std::string> topology, npus, bandwidth, latency;
  for (const Dimension& d : dims) {
    topology.push_back("Switch");
    npus.push_back(std::to_string(d.npus));
    bandwidth.push_back(format_number(d.bandwidth_gbps * 1e9 / kGiB));
    latency.push_back(format_number(d.hop_latency_ns));
  }
  report.notes.push_back(
      "bandwidth written in GiB/s (our GB/s x 1e9 / 2^30), as the backend multiplies it by 2^30");
  std::ostringstream yml;
  yml << "# gpucal export: per-link bandwidth in GiB/s (ASTRA-sim multiplies by 2^30), latency in ns per "
         "hop.\n"
      << "topology: " << yaml_list(topology) << "\n"
      << "npus_count: " << yaml_list(npus) << "\n"
      << "bandwidth: " << yaml_list(bandwidth) << "\n"
      << "latency: " << yaml_list(latency) << "\n";
  return yml.str();
}

}  // namespace

ExportReport export_astrasim(const json& calibration, const ExportSettings& settings,
                             const std::string& out_dir) {
  ExportReport report;
  report.consumer = "astrasim";
  const double around = settings.number("comm_bytes").value_or(0);  // the alpha-beta's size window
  // local-mem-bw first: the links' bandwidths make room for the reductions it charges.
  const auto mem = require_memory_bandwidth(calibration, settings, "local-mem-bw", report.refused);
  const double reduce_s_per_byte = mem ? 1.0 / (mem->value * 1e9) : 0;  // local-mem-bw's reduction pass
  std::vector<Dimension> dims = network_dimensions(calibration, settings, reduce_s_per_byte, around, report);
  json system = system_json(calibration, std::max<std::size_t>(dims.size(), 1), mem, report);
  if (settings.workload() && report.ok() && !dims.empty() && mem) {
    AstraSimFields f{.link_gbps = dims[0].bandwidth_gbps, .hop_latency_ns = dims[0].hop_latency_ns,
                     .peak_tflops = system["peak-perf"].get<double>(), .local_mem_gbps = mem->value};
    refit_astrasim(*settings.workload(), f, report);
    dims[0].bandwidth_gbps = f.link_gbps;
    dims[0].hop_latency_ns = f.hop_latency_ns;
    system["peak-perf"] = f.peak_tflops;
  }
  const std::string yml = network_yml(dims, report);
  write_export(report, out_dir, {{"network.yml", yml}, {"system.json", system.dump(2) + "\n"}});
  return report;
}

}  // namespace gpucal::calibration
