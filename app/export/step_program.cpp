#include "app/export/step_program.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/errors.h"

namespace gpucal::calibration {

using model::ModelOp;
using model::OpKind;

namespace {

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
bool is_comm(const ModelOp& op) { return op.kind == OpKind::collective || op.kind == OpKind::p2p; }
bool any_prefix(const std::string& role, std::initializer_list<const char*> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const char* p) { return starts_with(role, p); });
}

// Where an operation runs in the step.
enum class Section { prologue, layers, epilogue, step, pipeline };

Section section_of(const ModelOp& op) {
  if (predict::per_step(op)) return Section::step;
  if (op.comm.group == "pp") return Section::pipeline;
  if (starts_with(op.role, "embed_")) return Section::prologue;
  if (any_prefix(op.role, {"logits", "xent_", "final_norm", "cross_entropy"})) return Section::epilogue;
  return Section::layers;
}

bool is_backward(const ModelOp& op) {
  const std::string& r = op.role;
  return ends_with(r, "_dgrad") || ends_with(r, "_wgrad") || ends_with(r, "_bwd") ||
         (is_comm(op) && ends_with(r, "_grad"));
}

// The stage layers an operation runs on: an MoE block's on the MoE layers, a dense MLP's on the
// dense ones, the others on every layer.
std::vector<int64_t> layers_of(const ModelOp& op, const model::Workload& w) {
  const bool moe = any_prefix(op.role, {"router", "expert_", "shared_expert", "ep_", "moe_"});
  const bool dense_mlp = any_prefix(op.role, {"mlp_gate", "mlp_up", "mlp_down", "mlp_act"});
  std::vector<int64_t> all, picked;
  for (int64_t l = w.facts.layer_begin; l < w.facts.layer_end; ++l) {
    all.push_back(l);
    if ((moe && w.model.is_moe_layer(l)) || (dense_mlp && !w.model.is_moe_layer(l))) picked.push_back(l);
  }
  return (moe || dense_mlp) && !picked.empty() ? picked : all;
}

struct Item {
  std::size_t op;
  int64_t layer;
};

// Each operation's place and its calls per micro-batch, and per layer for the layers' ones.
struct Plan {
  std::vector<Section> section;
  std::vector<int64_t> per_micro_batch;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> calls_by_layer;  // (layer, calls)
};

Plan make_plan(const StageProgram& p) {
  Plan plan;
  const int64_t m = p.workload.facts.micro_batches;
  for (const auto& c : p.ops) {
    const ModelOp& op = c.op;
    const Section s = section_of(op);
    plan.section.push_back(s);
    if (s != Section::step && op.calls_per_step % m != 0)
      throw std::logic_error(op.role + ": " + std::to_string(op.calls_per_step) + " calls do not divide into " +
                             std::to_string(m) + " micro-batches");
    const int64_t per_mb = s == Section::step ? op.calls_per_step : op.calls_per_step / m;
    plan.per_micro_batch.push_back(per_mb);
    std::vector<std::pair<int64_t, int64_t>> by_layer;
    if (s == Section::layers) {
      const auto layers = layers_of(op, p.workload);
      const auto n = static_cast<int64_t>(layers.size());
      for (int64_t i = 0; i < n; ++i)  // spread evenly: the shares sum to per_mb
        by_layer.emplace_back(layers[i], (i + 1) * per_mb / n - i * per_mb / n);
    }
    plan.calls_by_layer.push_back(by_layer);
  }
  return plan;
}

// The calls of one forward or backward of model chunk `chunk`, in order.
std::vector<Item> phase_items(const StageProgram& p, const Plan& plan, int64_t chunk, int64_t chunks,
                              bool backward) {
  const auto& f = p.workload.facts;
  const int64_t per_chunk = (f.layer_end - f.layer_begin) / chunks;
  const int64_t begin = f.layer_begin + chunk * per_chunk, end = begin + per_chunk;
  std::vector<Item> items;
  // plan.section covers the derived operations; the pipeline messages the interleaved schedule
  // adds later (pipeline_op) are never among a phase's items.
  auto whole = [&](Section s) {
    for (std::size_t i = 0; i < plan.section.size(); ++i)
      if (plan.section[i] == s && is_backward(p.ops[i].op) == backward)
        for (int64_t k = 0; k < plan.per_micro_batch[i]; ++k) items.push_back({i, -1});
  };
  auto layer = [&](int64_t l) {
    for (std::size_t i = 0; i < plan.section.size(); ++i)
      if (plan.section[i] == Section::layers && is_backward(p.ops[i].op) == backward)
        for (const auto& [at, calls] : plan.calls_by_layer[i])
          if (at == l)
            for (int64_t k = 0; k < calls; ++k) items.push_back({i, l});
  };
  const bool first = chunk == 0, last = chunk == chunks - 1;
  if (!backward) {
    if (first) whole(Section::prologue);
    for (int64_t l = begin; l < end; ++l) layer(l);
    if (last) whole(Section::epilogue);
  } else {
    if (last) whole(Section::epilogue);
    for (int64_t l = end - 1; l >= begin; --l) layer(l);
    if (first) whole(Section::prologue);
  }
  return items;
}

// Appends nodes: on the chain, or off it (the overlap policy), joined on request.
class Builder {
 public:
  explicit Builder(StageProgram& p) : p_(p) {}
  std::size_t chain(ProgramNode n) {
    if (tail_) n.deps.push_back(*tail_);
    if (join_next_ && side_tail_) n.deps.push_back(*side_tail_);
    join_next_ = false;
    tail_ = push(std::move(n));
    return *tail_;
  }
  std::size_t side(ProgramNode n) {
    if (tail_) n.deps.push_back(*tail_);
    if (side_tail_ && side_tail_ != tail_) n.deps.push_back(*side_tail_);
    n.overlapped = true;
    side_tail_ = push(std::move(n));
    unjoined_ = true;
    return *side_tail_;
  }
  // The next node on the chain waits for everything off it so far.
  void join() {
    if (unjoined_) join_next_ = true;
    unjoined_ = false;
  }

 private:
  std::size_t push(ProgramNode n) {
    p_.nodes.push_back(std::move(n));
    return p_.nodes.size() - 1;
  }
  StageProgram& p_;
  std::optional<std::size_t> tail_, side_tail_;
  bool unjoined_ = false, join_next_ = false;
};

}  // namespace

std::vector<ScheduleStep> pipeline_order(int64_t stages, int64_t stage, int64_t micro_batches, int64_t chunks) {
  const int64_t total = micro_batches * chunks, group = stages * chunks;
  const int64_t warmup = chunks == 1 ? std::min(stages - stage - 1, total)
                                     : std::min((stages - stage - 1) * 2 + (chunks - 1) * stages, total);
  auto step = [&](int64_t k, bool forward) {
    ScheduleStep s;
    s.forward = forward;
    s.micro_batch = chunks == 1 ? k : (k / group) * stages + k % stages;
    const int64_t c = chunks == 1 ? 0 : (k % group) / stages;
    s.chunk = forward ? c : chunks - 1 - c;
    return s;
  };
  std::vector<ScheduleStep> order;
  for (int64_t k = 0; k < warmup; ++k) order.push_back(step(k, true));
  for (int64_t k = 0; k < total - warmup; ++k) {
    order.push_back(step(k + warmup, true));
    order.push_back(step(k, false));
  }
  for (int64_t k = total - warmup; k < total; ++k) order.push_back(step(k, false));
  return order;
}

namespace {

// The operation a pipeline message of `role` is a call of; the interleaved schedule's messages
// the 1F1B derivation has no operation for (the first stage receives from the last) are added,
// of the same size as the stage's other pipeline messages.
std::size_t pipeline_op(StageProgram& p, const std::string& role) {
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].op.role == role) return i;
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].op.comm.group == "pp") {
      ProgramOp added = p.ops[i];
      added.op.role = role;
      p.ops.push_back(added);
      p.added_roles.push_back(role);
      return p.ops.size() - 1;
    }
  throw std::logic_error("pipeline message " + role + " on a stage without pipeline messages");
}

struct Context {
  StageProgram& p;
  const Plan& plan;
  const predict::OverlapPolicy& overlap;
  int64_t stages, stage, chunks;
  Builder b;
  int64_t ring_tag = 0;
};

bool off_chain(const ModelOp& op, const predict::OverlapPolicy& overlap) {
  if (overlap.tp && predict::comm_dimension(op) == "tp" && !predict::per_step(op)) return true;
  return overlap.dp && predict::zero3_message(op);
}

void emit_item(Context& c, const Item& item, const ScheduleStep& s) {
  const ModelOp& op = c.p.ops[item.op].op;
  ProgramNode n{.op = item.op, .micro_batch = s.micro_batch, .chunk = s.chunk, .layer = item.layer,
                .backward = !s.forward};
  if (op.kind == OpKind::p2p) {  // a context-parallel ring step: send to the next rank, receive from the previous
    n.tag = 1000000 + ++c.ring_tag;
    n.kind = ProgramNode::Kind::send;
    c.b.chain(n);
    n.kind = ProgramNode::Kind::recv;
    c.b.chain(n);
    return;
  }
  n.kind = op.kind == OpKind::collective ? ProgramNode::Kind::collective : ProgramNode::Kind::compute;
  if (n.kind == ProgramNode::Kind::collective && off_chain(op, c.overlap))
    c.b.side(n);
  else
    c.b.chain(n);
}

// Both ends compute the tag from the receiver's micro-batch and chunk.
int64_t pipeline_tag(bool forward, int64_t micro_batch, int64_t chunk, int64_t chunks) {
  return 1 + 2 * (micro_batch * chunks + chunk) + (forward ? 0 : 1);
}

void emit_message(Context& c, const ScheduleStep& s, bool send) {
  const int64_t last = c.stages - 1;
  // Forward data flows to the next stage (the last stage's chunk c to the first stage's c + 1),
  // backward data the reverse.
  const bool downstream = s.forward == send;
  const bool exists = downstream ? (c.stage < last || s.chunk < c.chunks - 1) : (c.stage > 0 || s.chunk > 0);
  if (!exists) return;
  const int64_t peer = downstream ? (c.stage < last ? c.stage + 1 : 0) : (c.stage > 0 ? c.stage - 1 : last);
  const int64_t receiver_chunk = !send ? s.chunk
                                 : downstream ? (c.stage < last ? s.chunk : s.chunk + 1)
                                              : (c.stage > 0 ? s.chunk : s.chunk - 1);
  const std::string role =
      std::string("pp_") + (send ? "send" : "recv") + (s.forward ? "_fwd" : "_bwd");
  ProgramNode n{.kind = send ? ProgramNode::Kind::send : ProgramNode::Kind::recv,
                .op = pipeline_op(c.p, role),
                .micro_batch = s.micro_batch,
                .chunk = s.chunk,
                .backward = !s.forward,
                .peer_stage = peer,
                .tag = pipeline_tag(s.forward, s.micro_batch, receiver_chunk, c.chunks)};
  c.b.chain(n);
}

// The DP gradient buckets of --overlap dp, in derivation order, one entry per call.
std::vector<std::size_t> overlapped_buckets(const Context& c) {
  std::vector<std::size_t> buckets;
  if (!c.overlap.dp) return buckets;
  for (std::size_t i = 0; i < c.p.ops.size(); ++i)
    if (predict::dp_gradient_reduction(c.p.ops[i].op))
      for (int64_t k = 0; k < c.p.ops[i].op.calls_per_step; ++k) buckets.push_back(i);
  return buckets;
}

void emit_phase(Context& c, const ScheduleStep& s, const std::vector<std::size_t>& buckets) {
  emit_message(c, s, /*send=*/false);
  const std::vector<Item> items = phase_items(c.p, c.plan, s.chunk, c.chunks, !s.forward);
  const auto computes = static_cast<int64_t>(std::count_if(items.begin(), items.end(), [&](const Item& it) {
    return !is_comm(c.p.ops[it.op].op);
  }));
  const auto nb = static_cast<int64_t>(buckets.size());
  int64_t done = 0, next_bucket = 0;
  auto release = [&](int64_t upto) {  // bucket j runs once (j + 1) / B of the compute is done
    for (; next_bucket < nb && (next_bucket + 1) * computes <= upto * nb; ++next_bucket)
      c.b.side({.kind = ProgramNode::Kind::collective, .op = buckets[next_bucket], .micro_batch = s.micro_batch,
                .chunk = s.chunk, .backward = true});
  };
  for (const Item& it : items) {
    emit_item(c, it, s);
    if (!is_comm(c.p.ops[it.op].op)) release(++done);
  }
  release(computes);
  c.b.join();
  emit_message(c, s, /*send=*/true);
}

// Once per step: gradient reductions, then the other per-step messages, the optimizer, and
// the parameter all-gathers last.
void emit_step(Context& c) {
  auto all = [&](auto&& pick) {
    for (std::size_t i = 0; i < c.plan.section.size(); ++i) {  // the derived operations (see phase_items)
      const ModelOp& op = c.p.ops[i].op;
      if (c.plan.section[i] != Section::step || !pick(op)) continue;
      for (int64_t k = 0; k < op.calls_per_step; ++k)
        c.b.chain({.kind = is_comm(op) ? ProgramNode::Kind::collective : ProgramNode::Kind::compute, .op = i});
    }
  };
  auto param_gather = [](const ModelOp& op) { return is_comm(op) && ends_with(op.role, "_param"); };
  all([&](const ModelOp& op) { return predict::dp_gradient_reduction(op) && !c.overlap.dp; });
  all([&](const ModelOp& op) { return is_comm(op) && !predict::dp_gradient_reduction(op) && !param_gather(op); });
  all([&](const ModelOp& op) { return !is_comm(op); });
  all(param_gather);
}

}  // namespace

StageProgram build_stage_program(model::Workload workload, std::vector<ProgramOp> ops,
                                 const predict::OverlapPolicy& overlap, const predict::Schedule& schedule) {
  predict::validate_schedule(schedule, workload);
  StageProgram p{.workload = std::move(workload), .ops = std::move(ops)};
  const Plan plan = make_plan(p);
  const int64_t chunks = schedule.name == "interleaved" ? schedule.virtual_stages : 1;
  p.chunks = chunks;
  Context c{.p = p, .plan = plan, .overlap = overlap, .stages = p.workload.layout.pp,
            .stage = p.workload.facts.stage, .chunks = chunks, .b = Builder(p)};
  const auto order = pipeline_order(c.stages, c.stage, p.workload.facts.micro_batches, chunks);
  const std::vector<std::size_t> buckets = overlapped_buckets(c);
  for (std::size_t i = 0; i < order.size(); ++i) {
    emit_phase(c, order[i], i + 1 == order.size() ? buckets : std::vector<std::size_t>{});
    // A rank's program grows with the micro-batches (global batch / (micro-batch x dp)): the
    // first phase's size says how large the whole would be, before it is built.
    const auto estimate = static_cast<double>(p.nodes.size()) / static_cast<double>(i + 1) * static_cast<double>(order.size());
    if (i == 0 && estimate > static_cast<double>(kMaxProgramNodes))
      throw UsageError("the step's trace would hold about " + std::to_string(static_cast<long long>(estimate)) +
                       " nodes per rank (" + std::to_string(p.workload.facts.micro_batches) +
                       " micro-batches), more than " + std::to_string(kMaxProgramNodes) +
                       ": lower --global-batch or raise --micro-batch (a trace of fewer micro-batches simulates the same "
                       "steady state)");
  }
  emit_step(c);
  // Pipeline messages: as many calls as the schedule makes (the interleaved one makes v per
  // micro-batch and direction).
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].op.comm.group == "pp" && p.ops[i].op.kind == OpKind::p2p)
      p.ops[i].op.calls_per_step = std::count_if(p.nodes.begin(), p.nodes.end(),
                                                 [&](const ProgramNode& n) { return n.op == i; });
  return p;
}

}  // namespace gpucal::calibration
