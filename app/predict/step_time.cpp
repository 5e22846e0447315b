#include "app/predict/step_time.h"

#include <algorithm>
#include <stdexcept>

#include "core/errors.h"

namespace gpucal::predict {

using model::ModelOp;
using model::OpKind;

namespace {
bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
bool is_comm(const ModelOp& op) { return op.kind == OpKind::collective || op.kind == OpKind::p2p; }
}  // namespace

bool zero3_message(const ModelOp& op) { return starts_with(op.role, "zero3"); }

bool dp_gradient_reduction(const ModelOp& op) {
  return (op.comm.group == "dp" || op.comm.group == "expert_dp") && !zero3_message(op) && ends_with(op.role, "_grad");
}

OverlapPolicy parse_overlap(const std::string& text) {
  OverlapPolicy p;
  if (text == "none") return p;
  std::string item;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    item = text.substr(start, comma - start);
    bool* flag = item == "tp" ? &p.tp : item == "dp" ? &p.dp : nullptr;
    if (!flag) throw UsageError("--overlap: expected none, tp, dp or tp,dp, got '" + text + "'");
    if (*flag) throw UsageError("--overlap: '" + item + "' given twice in '" + text + "'");
    *flag = true;
    start = comma + 1;
  }
  return p;
}

std::string to_string(const OverlapPolicy& p) {
  if (p.tp && p.dp) return "tp,dp";
  if (p.tp) return "tp";
  if (p.dp) return "dp";
  return "none";
}

std::string comm_dimension(const ModelOp& op) {
  if (!is_comm(op)) return "";
  const std::string& g = op.comm.group;
  if (g == "expert_dp" || g == "embedding") return "dp";
  return g;
}

bool per_step(const ModelOp& op) {
  if (op.kind == OpKind::memory) return starts_with(op.role, "optimizer_step") || op.role == "grad_norm";
  if (!is_comm(op)) return false;
  if (op.role == "tp_allreduce_sp_grads") return true;
  const std::string& g = op.comm.group;
  return (g == "dp" || g == "expert_dp" || g == "embedding") && !zero3_message(op);
}

bool backward_compute(const ModelOp& op) {
  return !is_comm(op) && (ends_with(op.role, "_dgrad") || ends_with(op.role, "_wgrad") || ends_with(op.role, "_bwd"));
}

void validate_schedule(const Schedule& schedule, const model::Workload& w) {
  const int64_t pp = w.layout.pp, m = w.facts.micro_batches;
  if (schedule.name == "interleaved") {
    const int64_t v = schedule.virtual_stages;
    if (v < 2) throw UsageError("--schedule interleaved needs --virtual-stages of at least 2");
    if (m % pp != 0)
      throw UsageError("--schedule interleaved needs micro-batches (" + std::to_string(m) +
                       ") to be a multiple of --pp (" + std::to_string(pp) + ")");
    const int64_t stage_layers = w.facts.layer_end - w.facts.layer_begin, slots = w.facts.stage_slots;
    if (slots % v != 0)
      throw UsageError("--virtual-stages " + std::to_string(v) + " does not divide the stage's " +
                       std::to_string(stage_layers) + " layers" +
                       (slots != stage_layers ? " and the embedding or loss counted as layers (" +
                                                    std::to_string(slots) + ")"
                                              : std::string()));
  } else if (schedule.name != "1f1b") {
    throw UsageError("--schedule: expected 1f1b or interleaved, got '" + schedule.name + "'");
  }
}

CostedOp::CostedOp(const ModelOp* o, double t)
    : op(o),
      time_us(t),
      dimension(comm_dimension(*o)),
      once(per_step(*o)),
      backward(backward_compute(*o)),
      zero3(zero3_message(*o)),
      dp_grad(dp_gradient_reduction(*o)),
      flops_per_step(is_comm(*o) ? 0 : o->flops() * static_cast<double>(o->calls_per_step)) {}

StageTime stage_time(const Breakdown& b) {
  const auto pp = b.comm_s.find("pp");
  return {b.pipeline_s, pp == b.comm_s.end() ? 0.0 : pp->second, 1};
}

namespace {
// The whole pipeline's time for m micro-batches with v virtual stages (step_time.h): m x t_max +
// (sum of t'_s - t_max) / v, from per-step figures (t_s = pipeline_s / m).
double pipeline_time(const std::vector<StageTime>& pipeline, int64_t pp, int64_t m, int64_t v) {
  double fill = 0, slowest = 0;
  int64_t count = 0;
  for (const StageTime& s : pipeline) {
    fill += static_cast<double>(s.stages) * (s.pipeline_s - 0.5 * s.pp_s);
    slowest = std::max(slowest, s.pipeline_s);
    count += s.stages;
  }
  if (count != pp)
    throw std::logic_error("pipeline stages: " + std::to_string(count) + " given for pp " + std::to_string(pp));
  const double md = static_cast<double>(m);
  return slowest + (fill - slowest) / (md * static_cast<double>(v));
}
}  // namespace

Breakdown compute_breakdown(const std::vector<CostedOp>& ops, const model::Workload& w, const OverlapPolicy& policy,
                            const Schedule& schedule, double peak_tflops, const std::vector<StageTime>& pipeline) {
  validate_schedule(schedule, w);
  const int64_t pp = w.layout.pp, m = w.facts.micro_batches;
  const int64_t v = schedule.name == "interleaved" ? schedule.virtual_stages : 1;

  Breakdown b;
  double tp_pipeline = 0, zero3_s = 0, gemm_s = 0, dp_grad_s = 0, dp_last_bucket_s = 0;
  double pipeline_comm = 0, per_step_comm = 0;  // messages in the pipeline, and once per step
  for (const auto& c : ops) {
    const double t = c.time_us * 1e-6 * static_cast<double>(c.op->calls_per_step);
    const ModelOp& op = *c.op;
    if (!is_comm(op)) {
      (op.kind == OpKind::gemm ? b.gemm_s : op.kind == OpKind::attention ? b.attention_s : b.memory_s) += t;
      (c.once ? b.compute_per_step_s : b.compute_pipeline_s) += t;
      if (c.backward) b.backward_compute_s += t;
      if (op.kind == OpKind::gemm) gemm_s += t;
      b.model_flops += c.flops_per_step;
      continue;
    }
    b.comm_s[c.dimension] += t;
    (c.once ? per_step_comm : pipeline_comm) += t;
    if (c.dimension == "tp" && !c.once) tp_pipeline += t;
    if (c.zero3) zero3_s += t;
    if (c.dp_grad) {
      dp_grad_s += t;
      dp_last_bucket_s = std::max(dp_last_bucket_s, c.time_us * 1e-6);
    }
  }
  for (const char* dim : {"tp", "dp", "pp", "cp", "ep"}) b.comm_s.emplace(dim, 0.0), b.comm_hidden_s[dim] = 0;

  double hidden_zero3 = 0;
  if (policy.tp) b.comm_hidden_s["tp"] = std::min(tp_pipeline, gemm_s);
  if (policy.dp) hidden_zero3 = std::min(zero3_s, std::max(0.0, b.compute_pipeline_s - b.comm_hidden_s["tp"]));
  // Pipeline messages: everything but the per-step ones.
  const double pipeline_comm_exposed = pipeline_comm - (b.comm_hidden_s["tp"] + hidden_zero3);

  b.pipeline_s = b.compute_pipeline_s + pipeline_comm_exposed;
  if (pp > 1 && m > 0) {
    StageTime own = stage_time(b);
    own.stages = pp;
    b.bubble_s = std::max(0.0, pipeline_time(pipeline.empty() ? std::vector<StageTime>{own} : pipeline, pp, m, v) -
                                   b.pipeline_s);
    b.bubble_fraction = b.pipeline_s > 0 ? b.bubble_s / b.pipeline_s : 0;
  }

  double hidden_dp_grad = 0;
  if (policy.dp && m > 0)
    hidden_dp_grad =
        std::min(std::max(0.0, dp_grad_s - dp_last_bucket_s), b.backward_compute_s / static_cast<double>(m));
  b.comm_hidden_s["dp"] = hidden_dp_grad + hidden_zero3;

  b.step_s = b.pipeline_s + b.bubble_s + b.compute_per_step_s + per_step_comm - hidden_dp_grad;
  for (const auto& [dim, s] : b.comm_s) b.comm_exposed_s[dim] = s - b.comm_hidden_s[dim];
  b.tokens_per_step = static_cast<double>(w.facts.global_batch) * static_cast<double>(w.facts.seq);
  b.tokens_per_s = b.step_s > 0 ? b.tokens_per_step / b.step_s : 0;
  b.mfu = peak_tflops > 0 && b.step_s > 0 ? b.model_flops / (peak_tflops * 1e12 * b.step_s) : -1;
  return b;
}

}  // namespace gpucal::predict
