// The arithmetic of `gpucal predict`: from each operation's time per call to a step time.
// Pure functions of the costed ops and the policy; no I/O (unit-tested on hand-computed cases).
//
// Categories: compute = gemm + attention + memory (memory-bound ops, the optimizer included);
// communication by parallel dimension: tp; dp (groups dp, expert_dp and the first/last stage's
// embedding all-reduce); pp; cp; ep.
// Per step vs per micro-batch: the optimizer (optimizer_step*, grad_norm) and the gradient and
// parameter messages of DP/ZeRO-1/2 and the sequence-parallel norm-gradient all-reduce run once
// per step after the pipeline drains; everything else runs in the pipeline.
// Overlap policy (flags; none by default):
//   tp  TP messages in the pipeline hide under the GEMMs (comm-GEMM overlap, as Transformer
//       Engine's userbuffers): hidden_tp = min(tp, gemm), per step.
//   dp  DP gradient reductions hide under the last micro-batch's backward compute, all but the
//       last bucket (Megatron's --overlap-grad-reduce): hidden_dp = min(max(0, dp_grad -
//       dp_last_bucket), backward_compute / micro_batches); ZeRO-3 parameter gathers and
//       gradient reduce-scatters hide under the pipeline's compute left over by tp:
//       hidden_zero3 = min(zero3, compute_pipeline - hidden_tp).
//   pp, cp, ep messages are exposed (counted in full).
// Pipeline: pipeline_time = compute_pipeline + exposed pipeline comm (tp, pp, cp, ep, zero3), the
//   rank's. Priced stage by stage: with t_s a stage's pipeline time per micro-batch, t'_s the same
//   with its pp messages halved (a message is on the stages at both of its ends, and the fill and
//   drain cross each boundary once each way), t_max the slowest stage's, m micro-batches and v
//   virtual stages per rank (1F1B: v = 1; interleaved: v > 1, m a multiple of pp):
//     the pipeline's time = m x t_max + (sum over stages of t'_s - t_max) / v
//   (for m = 1, v = 1: every stage's forward and backward in turn, each message once), and
//   bubble = that - pipeline_time, the rank's idle time. With equal stages and free messages this
//   is Narayanan et al.'s (SC'21, eq. 1/2) (pp - 1) / (m x v) x pipeline_time.
// step_time = pipeline_time + bubble + per-step compute + per-step comm - hidden_dp (the rank's
//   stage's per-step work).
// tokens/s = global_batch x seq / step_time (the whole job's tokens: every rank runs the step).
// MFU = model FLOPs of the rank per step / (peak x step_time). FLOP convention: the rank's
//   GEMMs (2mnk for forward, data- and weight-gradient) + attention (fa2: forward 4bhdA with A
//   the unmasked score area, backward 2.5x), no recomputation, no memory-bound op flops.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model/workload.h"

namespace gpucal::predict {

struct OverlapPolicy {
  bool tp = false, dp = false;
};
// "none", "tp", "dp", "tp,dp" (either order); UsageError otherwise.
OverlapPolicy parse_overlap(const std::string& text);
std::string to_string(const OverlapPolicy& p);

struct Schedule {
  std::string name = "1f1b";  // 1f1b | interleaved
  int64_t virtual_stages = 1;
};

// An op at its time per call, with what compute_breakdown reads of it derived once (a prediction
// runs the breakdown several times over the same ops: each end of the interval, each stage).
struct CostedOp {
  CostedOp(const model::ModelOp* op, double time_us);
  // The same op at another time (an interval's end).
  CostedOp(const CostedOp& other, double time_us) : CostedOp(other) { this->time_us = time_us; }
  const model::ModelOp* op = nullptr;  // the workload's, which outlives the CostedOp
  double time_us = 0;
  std::string dimension;  // comm_dimension
  bool once = false, backward = false, zero3 = false, dp_grad = false;  // per_step, backward_compute, ...
  double flops_per_step = 0;  // op->flops() x calls_per_step
};

// The parallel dimension a message belongs to (tp, dp, pp, cp, ep); "" for compute.
std::string comm_dimension(const model::ModelOp& op);
// Runs once per step (after the pipeline), not per micro-batch.
bool per_step(const model::ModelOp& op);
// A backward compute op (roles *_dgrad, *_wgrad, *_bwd).
bool backward_compute(const model::ModelOp& op);
// A DP gradient reduction Megatron overlaps with backward (bucketed): what --overlap dp hides
// under the last micro-batch's backward.
bool dp_gradient_reduction(const model::ModelOp& op);
// A ZeRO-3 parameter gather or gradient reduce-scatter (every micro-batch; --overlap dp hides
// them under the pipeline's compute).
bool zero3_message(const model::ModelOp& op);

struct Breakdown {
  // Seconds per step on the rank.
  double gemm_s = 0, attention_s = 0, memory_s = 0;
  double compute_pipeline_s = 0, compute_per_step_s = 0, backward_compute_s = 0;
  std::map<std::string, double> comm_s;          // by dimension, all messages
  std::map<std::string, double> comm_hidden_s;   // by dimension, hidden by the policy
  std::map<std::string, double> comm_exposed_s;  // comm_s - comm_hidden_s
  double pipeline_s = 0, bubble_s = 0, bubble_fraction = 0;
  double step_s = 0;
  double model_flops = 0;  // the rank's, per step (convention above)
  double tokens_per_step = 0, tokens_per_s = 0;
  double mfu = -1;  // -1: no peak known
};

// One pipeline stage's figures per step, for pricing the pipeline stage by stage.
struct StageTime {
  double pipeline_s = 0;  // its Breakdown::pipeline_s: compute and exposed messages of its m micro-batches
  double pp_s = 0;        // its pipeline-parallel messages among them
  int64_t stages = 1;     // how many of the pipeline's stages have these figures
};
StageTime stage_time(const Breakdown& b);

// UsageError for an unknown schedule, or an interleaved one whose micro-batches are not a
// multiple of pp or whose virtual stages do not divide the stage's layers.
void validate_schedule(const Schedule& schedule, const model::Workload& w);
// Throws UsageError (validate_schedule) for an interleaved schedule whose micro-batches are not a multiple of pp
// or whose virtual stages do not divide the stage's layers.
// `pipeline`: every stage of the pipeline (their `stages` summing to pp), the rank's own among
// them; empty: pp stages like the rank's.
Breakdown compute_breakdown(const std::vector<CostedOp>& ops, const model::Workload& w, const OverlapPolicy& policy,
                            const Schedule& schedule, double peak_tflops,
                            const std::vector<StageTime>& pipeline = {});

}  // namespace gpucal::predict
