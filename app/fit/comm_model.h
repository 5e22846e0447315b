// Communication time of any collective, rank count, node count and message size, from the fits
// of a calibration.json, with the provenance of every number:
//   measured      the size and the group (collective, ranks, nodes) were measured: the measured
//                 median (the middle of the group's times at that size);
//   interpolated  inside what was measured: a size between measured sizes of that group (its
//                 best form, see comm_fits.h), or a rank count between two measured rank counts
//                 of the same tier (bus bandwidth interpolated in log2 n);
//   extrapolated  outside it: sizes beyond a group's range (its regime form's lines, the form
//                 that has latency and bandwidth terms to extend) or rank counts beyond the
//                 measured ones, from the nearest measured group: each regime's alpha scaled with
//                 log2 n for the latency-bound regimes of allreduce (trees, NCCL's choice for
//                 small messages) and with n - 1 for the others (rings and pipelines: one step
//                 per rank); its bus bandwidth kept (a link tier's), or, with a second measured
//                 count on that side, carried at the change per octave between the two nearest
//                 counts at that size (within x1.5 per octave).
// A link tier is intra-node (nnodes = 1) or inter-node (nnodes > 1); predictions never cross
// tiers: an inter-node query needs inter-node measurements.
//
// Used by `gpucal predict-comm` and meant for the model-workload and export code:
//   CommModel model(read_calibration_file("calibration.json"));
//   CommPrediction p = model.predict({.collective = "allreduce", .nranks = 64, .nnodes = 8,
//                                     .size_bytes = 256e6});
//   p.time_s, p.busbw_gbps, to_string(p.provenance), p.method, p.lo_us, p.hi_us
//
// Each prediction carries a 90% interval [lo_us, hi_us] (has_interval; interval_rule says how):
// at a measured size the spread of the times measured there; elsewhere in the group the group's
// conformal interval (comm_interval.h) around the prediction, widening between sparse sizes,
// across a regime switch and with the log distance beyond the measured sizes; between two
// measured rank counts the wider of the two groups' log half-widths; beyond them the nearest
// group's, multiplied by 1 + |log2(n / n_measured)| (a rule: rank extrapolation is not measured),
// and with a bandwidth trend at least the gap to the time with the bandwidth kept, either way.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpucal::calibration {

enum class Provenance { measured, interpolated, extrapolated };
std::string to_string(Provenance p);

struct CommQuery {
  std::string collective;  // allreduce, allgather, reduce_scatter, alltoall, broadcast, reduce, ...
  int64_t nranks = 0;      // >= 2
  int64_t nnodes = 0;      // give nnodes or ranks_per_node (or both)
  int64_t ranks_per_node = 0;
  double size_bytes = 0;  // nccl-tests S (the total buffer for allgather, reduce_scatter, alltoall)
  std::string dtype;      // "" = any: fp32 preferred, then bf16, then the group with most points
};

struct CommPrediction {
  double time_s = 0, time_us = 0;
  double algbw_gbps = 0, busbw_gbps = 0;  // S / t and S * bus_factor(n) / t, GB = 1e9 B
  Provenance provenance = Provenance::extrapolated;
  std::string form;                 // the form evaluated, or "measured"
  std::vector<std::string> groups;  // calibration groups used, as "allreduce/fp32/n16/rpn8/nodes2"
  std::string method;               // one sentence: how the number was made
  bool has_interval = false;        // false when the group has no computed interval
  double lo_us = 0, hi_us = 0;      // the 90% interval (lo <= time_us <= hi)
  std::string interval_rule;        // how the interval was made, or why there is none
  // How far beyond what was measured: "x16 above the largest measured size", "x4 beyond the
  // measured rank counts (16)"; "" when the answer is measured or interpolated.
  std::string extrapolated_by;
};

// A calibration group as the model sees it.
struct CommGroupInfo {
  std::string key, collective, dtype;
  int64_t nranks = 0, nnodes = 0, ranks_per_node = 0;
  double min_size_bytes = 0, max_size_bytes = 0;
  std::string best_form;
};

class CommModel {
 public:
  // Keeps a copy of calibration["communication"]["collectives"]. Throws std::invalid_argument
  // when there is none.
  explicit CommModel(const nlohmann::json& calibration);
  // Throws std::invalid_argument for a bad query (unknown collective, nranks < 2, size <= 0,
  // neither nnodes nor ranks_per_node, nnodes * ranks_per_node < nranks) or when no group of the
  // collective, dtype and link tier exists (the message lists what there is).
  CommPrediction predict(const CommQuery& query) const;
  const std::vector<CommGroupInfo>& groups() const { return info_; }

 private:
  nlohmann::json groups_;  // communication.collectives
  std::vector<CommGroupInfo> info_;
};

}  // namespace gpucal::calibration
