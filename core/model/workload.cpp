#include "core/model/workload.h"

#include <charconv>
#include <map>

#include "core/formulas/attention_flops.h"
#include "core/model/bounds.h"
#include "core/output/row.h"

namespace gpucal::model {

std::string ModelOp::bench() const {
  switch (kind) {
    case OpKind::gemm:
      return "gemm";
    case OpKind::attention:
      return "attention";
    case OpKind::memory:
      return "memory";
    case OpKind::collective:
      return "collectives";
    default:
      return "p2p";
  }
}

double ModelOp::flops() const {
  if (kind == OpKind::gemm)  // bench_gemm's 2mnk convention (GemmProblem::flops)
    return 2.0 * static_cast<double>(gemm.m) * static_cast<double>(gemm.n) * static_cast<double>(gemm.k) *
           static_cast<double>(gemm.batch);
  if (kind == OpKind::attention) {
    const AttentionShape& a = attention;
    return attention::attention_flops({a.batch, a.heads, a.seq_q, a.seq_kv, a.head_dim, a.causal},
                                      attention::parse_pass(a.pass), attention::FlopConvention::fa2);
  }
  return 0;
}

void ModelOp::visit_shape_cells(const std::function<void(std::string_view, std::string_view)>& cell) const {
  char buf[32];
  auto num = [&](std::string_view name, int64_t v) {
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    cell(name, std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  };
  const std::string dt = to_string(dtype);
  switch (kind) {
    case OpKind::gemm:
      num("m", gemm.m);
      num("n", gemm.n);
      num("k", gemm.k);
      num("batch", gemm.batch);
      cell("layout", gemm.layout);
      cell("beta", format_number(gemm.beta));
      cell("out_dtype", to_string(gemm.out_dtype));
      cell("dtype", dt);
      return;
    case OpKind::attention:
      cell("pass", attention.pass);
      num("batch", attention.batch);
      num("heads", attention.heads);
      num("kv_heads", attention.kv_heads);
      num("seq_q", attention.seq_q);
      num("seq_kv", attention.seq_kv);
      num("head_dim", attention.head_dim);
      cell("causal", attention.causal ? "1" : "0");
      cell("layout", "BSHD");
      cell("dtype", dt);
      return;
    case OpKind::memory:
      cell("kernel", memory.kernel);
      cell("dtype", dt);
      if (memory.rows) num("rows", memory.rows);
      if (memory.cols) num("cols", memory.cols);
      if (memory.params) num("params", memory.params);
      // bench_memory's STREAM kernels (the gradient-norm read) record their array's bytes as
      // array_bytes; its `bytes` column is what the kernel moves (the read adds its partial sums).
      if (memory.bytes) num("array_bytes", memory.bytes);
      return;
    case OpKind::collective:
      cell("collective", comm.collective);
      num("nranks", comm.group_size);
      num("size_bytes", comm.size_bytes);
      cell("in_place", comm.in_place ? "1" : "0");
      cell("dtype", dt);
      return;
    default:
      cell("pattern", comm.collective);
      num("size_bytes", comm.size_bytes);
  }
}

std::vector<std::pair<std::string, std::string>> ModelOp::shape_cells() const {
  std::vector<std::pair<std::string, std::string>> cells;
  visit_shape_cells([&](std::string_view k, std::string_view v) { cells.emplace_back(k, v); });
  return cells;
}

std::string ModelOp::shape_text() const {
  std::string s;
  visit_shape_cells([&](std::string_view k, std::string_view v) {
    if (k == "dtype") return;
    s.append(s.empty() ? "" : " ").append(k).append("=").append(v);
  });
  if (kind == OpKind::collective || kind == OpKind::p2p) s.append(" group=").append(comm.group);
  return s;
}

Workload derive_workload(const ModelSpec& model, const ParallelLayout& layout) {
  Workload w;
  w.layout = layout;
  w.model = model_as_run(model, layout);
  w.facts = derive_facts(w.model, layout);
  const StepFacts& f = w.facts;
  for (int64_t i = f.layer_begin; i < f.layer_end; ++i) {
    const detail::LayerParams p = detail::layer_params(w.model, layout, f, i);
    w.dense_params = checked_add(w.dense_params, p.dense, "parameters of the stage");
    w.expert_params = checked_add(w.expert_params, p.expert, "expert parameters of the stage");
  }
  w.dense_params =
      checked_add(w.dense_params, detail::stage_extra_params(w.model, layout, f).dense, "parameters of the stage");
  w.ops.reserve(64);  // a stage of one layer kind and its extras come to 30-50 ops
  detail::add_compute_ops(w);
  detail::add_memory_ops(w);
  detail::add_comm_ops(w);

  const ModelSpec& m = w.model;
  w.notes.push_back("one rank of pipeline stage " + std::to_string(f.stage) + " of " +
                    std::to_string(layout.pp) + " (layers " + std::to_string(f.layer_begin) + ".." +
                    std::to_string(f.layer_end - 1) + ")");
  w.notes.push_back(
      "GEMMs as Megatron/Transformer Engine call cuBLAS: fwd TN, dgrad NN, wgrad NT accumulating (beta 1) "
      "into fp32 main gradients; gate and up as two GEMMs (Megatron fuses them into one of twice the width)");
  if (layout.cp > 1)
    w.notes.push_back(
        "context parallel: Transformer Engine's p2p ring; attention as one step on the rank's own chunk "
        "plus cp-1 steps against other chunks (causal: seq_kv halved, unmasked)");
  if (m.moe())
    w.notes.push_back("MoE: balanced routing, every expert gets ceil(T x top_k x ep / experts) = " +
                      std::to_string(f.tokens_per_expert) +
                      " tokens; local experts as one grouped GEMM (batch = " +
                      std::to_string(f.local_experts) + "); token permutation not modelled");
  if (m.mla())
    w.notes.push_back(
        "MLA: projections as published (down-projections whole on every tp rank); the attention kernel "
        "runs head_dim " +
        std::to_string(m.head_dim) + " for P.V too (value dim " + std::to_string(m.v_dim()) + ")");
  if (layout.zero == 3) w.notes.push_back("ZeRO-3/FSDP: one unit per layer plus one for embeddings and head");
  if (layout.zero <= 2 && f.dp_group > 1)
    w.notes.push_back(
        "DP buckets: the buffer cut into equal buckets of " + std::to_string(f.dp_bucket_params) +
        " parameters (0: one bucket), padded to the group; Megatron closes buckets at parameter "
        "boundaries");
  w.notes.push_back(
      "not modelled: embedding lookup and its gradient scatter, rotary embedding, dropout's backward mask, "
      "activation recomputation, the pipeline bubble and interleaved schedules (those are predict's)");
  return w;
}

std::vector<OpGroup> group_ops(const std::vector<ModelOp>& ops, const std::string& bench) {
  std::vector<OpGroup> groups;
  std::map<std::vector<std::pair<std::string, std::string>>, size_t> index;
  for (const ModelOp& op : ops) {
    if (op.bench() != bench) continue;
    const auto key = op.shape_cells();
    auto it = index.find(key);
    if (it == index.end()) {
      index[key] = groups.size();
      groups.push_back({op, {op.role}});
      continue;
    }
    OpGroup& g = groups[it->second];
    g.op.calls_per_step += op.calls_per_step;
    bool seen = false;
    for (const auto& r : g.roles) seen = seen || r == op.role;
    if (!seen) {
      g.roles.push_back(op.role);
      g.op.role += "+" + op.role;
    }
  }
  return groups;
}

nlohmann::json to_json(const ModelOp& op) {
  nlohmann::json j = {{"bench", op.bench()},
                      {"op_role", op.role},
                      {"calls_per_step", op.calls_per_step},
                      {"dtype", to_string(op.dtype)}};
  switch (op.kind) {
    case OpKind::gemm: {
      const GemmShape& g = op.gemm;
      j["shape"] = {{"m", g.m},
                    {"n", g.n},
                    {"k", g.k},
                    {"batch", g.batch},
                    {"layout", g.layout},
                    {"beta", g.beta},
                    {"out_dtype", to_string(g.out_dtype)}};
      if (!g.accumulation.empty()) j["shape"]["accumulation"] = g.accumulation;
      break;
    }
    case OpKind::attention: {
      const AttentionShape& a = op.attention;
      j["shape"] = {{"pass", a.pass},         {"batch", a.batch},  {"heads", a.heads},
                    {"kv_heads", a.kv_heads}, {"seq_q", a.seq_q},  {"seq_kv", a.seq_kv},
                    {"head_dim", a.head_dim}, {"causal", a.causal}};
      break;
    }
    case OpKind::memory: {
      const MemoryShape& s = op.memory;
      j["shape"] = {
          {"kernel", s.kernel}, {"rows", s.rows}, {"cols", s.cols}, {"params", s.params}, {"bytes", s.bytes}};
      break;
    }
    default: {
      const CommShape& c = op.comm;
      j["shape"] = {{op.kind == OpKind::p2p ? "pattern" : "collective", c.collective},
                    {"group", c.group},
                    {"group_size", c.group_size},
                    {"size_bytes", c.size_bytes},
                    {"in_place", c.in_place}};
    }
  }
  const double flops = op.flops();
  if (flops > 0) j["flops"] = flops;
  return j;
}

nlohmann::json to_json(const Workload& w) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : w.ops) ops.push_back(to_json(op));
  return {{"model", to_json(w.model)},
          {"layout", to_json(w.layout)},
          {"facts", to_json(w.facts)},
          {"dense_params", w.dense_params},
          {"expert_params", w.expert_params},
          {"notes", w.notes},
          {"ops", ops}};
}

}  // namespace gpucal::model
