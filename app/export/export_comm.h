// What the modelers' formulas need from communication: α and bus bandwidth of ONE collective at
// ONE group size in one network tier (intra-node: spans_nodes 0, inter-node: 1), with where the
// figures came from, so each operation of a tool uses its own collective's figure at the group
// size the tool asks for.
//
// The α–β pair of a collective at the group size asked comes from the communication models
// (comm_model.h): the line through the model's times at two sizes, by default the two largest
// measured sizes of the nearest measured group (the bandwidth end, where a training step's
// collectives are), with --set comm_bytes that size and the measured size below it, so the
// tool is exact at both. The model gives measured medians, the best form between measured
// sizes, and for a group size not measured the bus bandwidth interpolated between measured
// rank counts or extrapolated from the nearest (provenance measured | interpolated |
// extrapolated, said in the source). Where the line's intercept is negative (bus bandwidth
// falling with size), α = 0 and the bandwidth at the larger size. p2p is not in the model: its
// α–β is fitted to the measured sizes >= kBandwidthRegimeBytes (or the secant at comm_bytes).
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
  std::string provenance;         // measured | interpolated | extrapolated (comm_model.h)
  std::string source;             // the group and the fit, for the notes
  std::string interval;           // the 90% interval of the model's times the figure was made from
                                  // (comm_model.h, comm_interval.h), for the notes; "" when none
  nlohmann::json group;           // the communication.collectives[] / p2p[] entry
  std::string describe() const;
};

// dtype: of the nearest measured group (rank count, then the first of `dtypes`, then the most
// points). Inter-node: ranks_per_node 0 = the nearest measured group's. nullopt when no group of
// the collective in the tier exists or the model cannot answer.
std::optional<CommFigure> collective_figure(const nlohmann::json& calibration, const std::string& collective,
                                            int64_t nranks, int spans_nodes, double around_bytes = 0,
                                            const std::vector<std::string>& dtypes = {"bf16", "fp16", "fp32"},
                                            int64_t ranks_per_node = 0);

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
