// Workload-aware single-number fields (`gpucal export --to calculon|astrasim|nersc|vtrain --model
// ...`): a tool's one matrix rate, or one latency and bandwidth per network tier, chosen to
// minimise the error over the operations the step runs rather than to reproduce one reference
// shape. The error is share-weighted squared log error:
//   E = sum_i share_i · ln(tool_i / ours_i)^2 / sum_i share_i
// over the step's operations the field serves, share_i = time_i x calls_i / the step's summed
// operation time (every stage's), ours_i the time `gpucal predict` costs the operation at
// (app/predict/op_cost.h), tool_i the tool's own formula (app/export/tool_formulas.h).
// Without --model the exporters keep their reference-shape fields, byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/export/export_common.h"
#include "app/export/export_workload.h"

namespace gpucal::calibration {

// One operation of the step (ops of equal shape and group merged, their calls summed).
struct StepOp {
  std::string roles;    // "qkv_fwd+mlp_up_fwd"
  model::ModelOp op;    // the first op of the merge
  double ours_s = 0;    // one call, as gpucal predict costs it
  double share = 0;     // of the step's summed operation time, all calls
  int64_t nnodes = 1;          // messages: nodes the group spans
  int64_t ranks_per_node = 1;  // messages: the group's ranks per node
  std::string describe() const;  // "allreduce tp n=2 1.5 MiB" or "gemm 512x4096x1536"
};

struct StepOps {
  std::vector<StepOp> ops;
  std::string step;  // describe_step() of stage 0
  std::vector<std::string> not_costed;  // "bench role (shape): why" of each operation left out
};

// The step's operations, every stage's, costed as `gpucal predict` costs them; an operation
// nothing measures or models is left out (listed in not_costed). nullopt with a refusal line
// when none can be costed.
std::optional<StepOps> step_ops(const ExportWorkload& w, std::vector<std::string>& refused);

// One operation's term of the error: the tool's time as a function of the fitted latency and
// slope (a tier's latency and seconds per byte, or 0 and seconds per flop); `key` picks which of
// several slopes it uses (Calculon's per-collective scalars).
struct FitTerm {
  double weight = 0, ours_s = 0;
  std::size_t key = 0;
  std::function<double(double latency, double slope)> tool_s;
};

// E above for the given latency and slopes (slopes[key]).
double weighted_log_error(const std::vector<FitTerm>& terms, double latency, const std::vector<double>& slopes);
// The slope of `key` minimising E at a fixed latency: a scan of ln(slope) over guess x e^±12,
// then golden-section refinement; `guess` itself when no term has the key.
double fit_slope(const std::vector<FitTerm>& terms, std::size_t key, double latency, double guess);
// Latency (>= 0) and every key's slope minimising E: latency scanned over 0 and guess x 2^-20..2^6
// (doubled further while the best is the scan's top and the error still falls, to guess x 2^26)
// with each key's slope refitted, then golden-section refinement between the best's neighbours.
struct LatencySlopes {
  double latency = 0;
  std::vector<double> slopes;
};
LatencySlopes fit_latency_slopes(const std::vector<FitTerm>& terms, double latency_guess,
                                 const std::vector<double>& slope_guess);

// One row of an export's residual table: an operation and the tool's time from the
// reference-shape fields (before) and the workload-aware ones (after).
struct Residual {
  const StepOp* op = nullptr;
  std::string fields;  // which of the tool's fields price it
  double before_s = 0, after_s = 0;
};
// The NOTES.md section "Workload-aware fields": the step, the fields changed (before -> after),
// the share-weighted error before and after, and per operation its share, our time and
// tool ÷ ours before and after.
std::string residual_section(const StepOps& step, const std::vector<std::string>& changed,
                             const std::vector<Residual>& rows);
// The share-weighted RMS log error of the rows (sqrt of E), before or after.
double residual_rms(const std::vector<Residual>& rows, bool after);

}  // namespace gpucal::calibration
