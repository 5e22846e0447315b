// What the modelers' formulas need from communication: α and bus bandwidth of ONE collective at
// ONE group size in one network tier (intra-node: spans_nodes 0, inter-node: 1), with where the
// figures came from, so each operation of a tool uses its own collective's figure at the group
// size the tool asks for.
//
// The α–β pair: with `around_bytes` (--set comm_bytes: the message size the modelled workload's
// collectives have) inside the measured range, the secant of the measured curve there (through
// the two measured sizes around it, so exact at both); else fitted (fit.h, relative residuals)
// to the group's medians at sizes >= kBandwidthRegimeBytes, the regime a training step's
// collectives are in; with fewer than three such sizes, the group's all-size α–β from
// calibration.json. The source string says which, and how far the fit is from its medians: a
// tool with one α–β per tier is exact only where the measured curve is α–β shaped. A group size that was not
// measured takes the nearest measured group of the same collective and tier (provenance
// "nearest", not scaled: the communication models of calibration.json will replace this with
// interpolated / extrapolated figures).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpucal::calibration {

constexpr double kBandwidthRegimeBytes = 1024.0 * 1024.0;

struct CommFigure {
  std::string collective;  // allreduce, allgather, reduce_scatter, ... or the p2p pattern
  int64_t nranks_asked = 0, nranks_measured = 0;
  double alpha_us = 0;            // latency of one operation
  double busbw_gbps = 0;          // bus bandwidth (GB = 1e9 B); for p2p the one-way bandwidth
  double bus_factor = 1;          // of the measured group (nccl-tests: allreduce 2(n-1)/n, ...)
  bool bandwidth_regime = false;  // fitted on >= 3 sizes >= kBandwidthRegimeBytes (else all sizes)
  std::string provenance;         // measured | nearest
  std::string source;             // the group and the fit, for the notes
  nlohmann::json group;           // the communication.collectives[] / p2p[] entry
  std::string describe() const;
};

// dtype preference: the first of `dtypes` present, else the group with the most points.
std::optional<CommFigure> collective_figure(const nlohmann::json& calibration, const std::string& collective,
                                            int64_t nranks, int spans_nodes, double around_bytes = 0,
                                            const std::vector<std::string>& dtypes = {"bf16", "fp16",
                                                                                      "fp32"});

// The figure of one given collectives group (its bandwidth-regime α–β), asked at `nranks`.
std::optional<CommFigure> group_figure(const nlohmann::json& group, int64_t nranks, double around_bytes = 0);

// One-way point-to-point figure of a tier: the sendrecv fit (a stream of messages, as a
// pipeline stage sends them), else pingpong's (round trips halved: α / 2, bandwidth x 2).
std::optional<CommFigure> p2p_figure(const nlohmann::json& calibration, int spans_nodes,
                                     double around_bytes = 0);

// The largest ranks_per_node of any measured collectives group (intra-node), and the
// (nranks, nnodes, ranks_per_node) of the largest inter-node group; nullopt when none.
std::optional<int64_t> measured_gpus_per_node(const nlohmann::json& calibration);
struct InterNodeShape {
  int64_t nranks = 0, nnodes = 0, ranks_per_node = 0;
};
std::optional<InterNodeShape> measured_inter_node(const nlohmann::json& calibration);

// Measured (size_bytes, time_us_median) of a group, one per size (the smallest median of repeats).
std::vector<std::pair<double, double>> measured_curve(const nlohmann::json& group);

}  // namespace gpucal::calibration
