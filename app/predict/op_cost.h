// What one call of a step's operation costs, with where the number came from. In order:
//   1. measured: an ok row of RESULTS_DIR/<bench>.csv whose shape cells equal the op's
//      (ModelOp::shape_cells(): a `--model` run of the benches has exactly these rows, and a
//      general sweep row of the same shape counts too); rows that name the op in op_role win,
//      then the fastest implementation (time_us_median);
//   2. the calibration tables (RESULTS_DIR/calibration.json, else built from the folder):
//      GEMMs from the GEMM surface over compute.gemm.<dtype>.by_shape (app/fit/gemm_surface.h:
//      TFLOP/s as a local quadratic in log2 of batch, m, n, k); attention from compute.attention's by_seq (TFLOP/s
//      interpolated in log2 seq_kv); memory ops from memory.ops.<kernel>.<dtype>.by_bytes
//      (bandwidth interpolated in log2 bytes moved, bench_memory's bytes_moved convention);
//      collectives from the communication model (comm_model.h); p2p messages from
//      communication.p2p's best form for the pattern.
// Provenance: measured, interpolated (inside the measured range of the table) or
// extrapolated (outside it: the nearest end's efficiency or bandwidth).
// Interval (lo_us, hi_us): a measured row's time_us_p10..time_us_p90; a collective's the
// communication model's 90% interval (comm_model.h); a p2p message's its group's conformal
// interval (comm_interval.h); a GEMM's the surface's 90th-percentile held-out error, one such
// width more per octave outside the measured shapes; none (has_interval false, lo = hi = time) for
// the attention and memory tables.
#pragma once

#include <map>
#include <unordered_map>
#include <memory>
#include <tuple>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/fit/comm_model.h"
#include "app/fit/gemm_surface.h"
#include "app/common/results_dir.h"
#include "core/model/workload.h"

namespace gpucal::predict {

using calibration::Provenance;

struct OpCost {
  double time_us = 0;  // one call
  Provenance provenance = Provenance::measured;
  std::string method;                // one line: how
  std::vector<std::string> sources;  // rows ("gemm.csv:12 point=...") or calibration paths
  bool has_interval = false;
  double lo_us = 0, hi_us = 0;  // lo <= time_us <= hi (both = time_us without an interval)
  std::string interval_rule;    // how the interval was made, or why there is none
};

struct CostOptions {
  int64_t ranks_per_node = 8;  // how a group of the layout maps onto nodes (collectives)
};

class OpCoster {
 public:
  // `calibration` may be null (then only measured rows are used).
  OpCoster(const calibration::ResultsDir& results, nlohmann::json calibration, CostOptions options);
  ~OpCoster();
  // null with `why` filled when nothing measures or models the op; else the answer, kept for the
  // coster's life (an op of the same key, as in a sweep's next layout, is not costed again).
  const OpCost* cost(const model::ModelOp& op, const model::ParallelLayout& layout, std::string& why) const;

 private:
  std::optional<OpCost> cost_point(const model::ModelOp& op, const model::ParallelLayout& layout,
                                   std::string& why) const;
  // `accumulation`, when given: the accumulation the row measured (fp8_accumulation_of), "" not known.
  std::optional<OpCost> measured(const model::ModelOp& op, std::string* accumulation = nullptr) const;
  std::optional<OpCost> from_gemm_table(const model::ModelOp& op, std::string& why) const;
  std::optional<OpCost> from_attention_table(const model::ModelOp& op, std::string& why) const;
  std::optional<OpCost> from_memory_table(const model::ModelOp& op, std::string& why) const;
  std::optional<OpCost> from_comm_model(const model::ModelOp& op, const model::ParallelLayout& layout,
                                        std::string& why) const;
  std::optional<OpCost> from_p2p_fit(const model::ModelOp& op, const model::ParallelLayout& layout, std::string& why) const;

  const calibration::ResultsDir& results_;
  nlohmann::json calibration_;
  CostOptions options_;
  std::unique_ptr<calibration::CommModel> comm_;
  std::string comm_error_;
  // The GEMM surface's shapes per dtype and its answers per (dtype, batch, m, n, k): a sweep asks
  // the same shapes for every layout.
  mutable std::map<std::string, std::vector<calibration::GemmSample>> gemm_samples_;
  mutable std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>, OpCost> gemm_cache_;
  // Every answer of cost(), by the op's measurement cells (and, for a message, its group and the
  // layout that places the group on nodes): a sweep's layouts share most of their ops.
  struct Answer {
    std::optional<OpCost> cost;
    std::string why;
  };
  mutable std::unordered_map<std::string, Answer> answers_;
};

// Ranks of a layout's group that share a node, Megatron's rank order (tp fastest, then cp,
// ep within dp, dp, pp): a group with stride s between members puts max(1, rpn / s) of them
// on a node, at most the group size. Returned as nnodes the group spans.
int64_t group_nnodes(const std::string& group, int64_t group_size, const model::ParallelLayout& layout,
                     int64_t ranks_per_node);

// y at x on the points (x ascending), linear in log2 x; outside, the nearest end's y.
// `inside` says whether x was within [first, last].
double interpolate_log2(const std::vector<std::pair<double, double>>& xy, double x, bool& inside);

}  // namespace gpucal::predict
