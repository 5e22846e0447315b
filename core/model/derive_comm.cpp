// Every message of one step on one rank, in Megatron-LM's order of things:
//  tp  without sp: an all-reduce after the row-parallel attention output and MLP down in
//      forward, and of the input gradient of the column-parallel QKV and MLP up in backward;
//      with sp: all-gather before / reduce-scatter after each tensor-parallel region, their
//      mirrors in backward, plus the all-gather of the input again for each column-parallel
//      weight gradient (Megatron keeps only the sequence shard); vocabulary-parallel embedding,
//      logits and cross-entropy (three all-reduces of T fp32 values); under sp, one all-reduce
//      of the gradients every tp rank holds whole (norms, row-parallel biases, router).
//  dp  per gradient bucket after the last micro-batch: all-reduce (ZeRO 0) or reduce-scatter
//      of gradients and all-gather of updated parameters (ZeRO 1, 2: Megatron's distributed
//      optimizer); ZeRO 3 (FSDP, one unit per layer): all-gather of a layer's parameters in
//      forward and again in backward, reduce-scatter of its gradients, every micro-batch.
//  pp  per micro-batch the activation to the next stage and its gradient back (1F1B).
//  cp  Transformer Engine's ring: cp - 1 exchanges of K and V per layer forward, of K, V and
//      their gradients backward.
//  ep  all-to-all dispatch and combine of routed tokens, forward and backward; with tp, the
//      routed tokens all-gathered over tp after dispatch and reduce-scattered before combine.
// Sizes follow nccl-tests (S: all-reduce buffer, all-gather output, reduce-scatter input,
// all-to-all send buffer), rounded up to what the collective splits evenly.
#include <map>

#include "core/model/bounds.h"
#include "core/model/workload.h"

namespace gpucal::model::detail {

namespace {

// S rounded up so that every rank's share is whole elements: a multiple of n x sizeof for
// the collectives that split S by rank, of sizeof otherwise.
int64_t even_size(const std::string& collective, int64_t n, int64_t elem, int64_t bytes) {
  const int64_t granule =
      collective == "allreduce" || collective == "sendrecv" || collective == "ring" ? elem : n * elem;
  return ceil_div(bytes, granule) * granule;
}

struct Comm {
  Workload& w;
  void operator()(const std::string& role, const std::string& collective, const std::string& group, int64_t n,
                  int64_t bytes, int64_t calls, DType dtype) {
    if (calls == 0 || n < 2 || bytes == 0) return;
    const bool p2p = collective == "sendrecv" || collective == "ring";
    ModelOp op;
    op.kind = p2p ? OpKind::p2p : OpKind::collective;
    op.role = role;
    op.calls_per_step = calls;
    op.dtype = dtype;
    // In place as the frameworks run them (NCCL's in-place layouts); all-to-all out of place.
    op.comm = {.collective = collective,
               .group = group,
               .group_size = n,
               .size_bytes = even_size(collective, n, static_cast<int64_t>(dtype_bytes(dtype)), bytes),
               .in_place = !p2p && collective != "alltoall"};
    w.ops.push_back(op);
  }
};

// Parameter buffer split into buckets of `bucket` parameters (0: one bucket), each padded
// to a multiple of the group so that reduce-scatter shards are equal: {params, count}.
std::map<int64_t, int64_t> buckets(int64_t params, int64_t bucket, int64_t group) {
  std::map<int64_t, int64_t> out;
  if (params == 0) return out;
  if (bucket <= 0 || bucket >= params) {
    out[ceil_div(params, group) * group] += 1;
    return out;
  }
  const int64_t full = params / bucket, rest = params % bucket;
  out[ceil_div(bucket, group) * group] += full;
  if (rest > 0) out[ceil_div(rest, group) * group] += 1;
  return out;
}

// What every group's messages are sized from: the step's dtypes and the bytes of one
// micro-batch's hidden states on this rank.
struct CommContext {
  const ModelSpec& m;
  const ParallelLayout& l;
  const StepFacts& f;
  Comm comm;
  DType d, g;        // activations and parameters; gradients
  int64_t b, gb;     // their bytes per element
  int64_t mb, layers, tp;
  int64_t act;       // a whole micro-batch's hidden states on this rank
};

// Tensor parallelism.
void add_tp_ops(CommContext& c) {
  const ModelSpec& m = c.m;
  const ParallelLayout& l = c.l;
  const StepFacts& f = c.f;
  Comm& comm = c.comm;
  const DType d = c.d, g = c.g;
  const int64_t gb = c.gb, mb = c.mb, tp = c.tp, act = c.act;
  const int64_t mlp_regions = f.dense_layers + (m.shared_experts > 0 ? f.moe_layers : 0);
  const int64_t regions = c.layers + mlp_regions;  // attention + tp-split MLPs
  const bool embed = f.first_stage && m.vocab > 0, logits = f.last_stage && m.vocab > 0;
  if (!l.sp) {
    comm("tp_allreduce_fwd", "allreduce", "tp", tp, act, regions * mb, d);
    comm("tp_allreduce_bwd", "allreduce", "tp", tp, act, regions * mb, d);
    if (embed) comm("embed_tp_allreduce_fwd", "allreduce", "tp", tp, act, mb, d);
    if (logits) comm("logits_tp_allreduce_bwd", "allreduce", "tp", tp, act, mb, d);
  } else {
    comm("tp_allgather_fwd", "allgather", "tp", tp, act, regions * mb, d);
    comm("tp_reducescatter_fwd", "reduce_scatter", "tp", tp, act, regions * mb, d);
    comm("tp_allgather_bwd", "allgather", "tp", tp, act, 2 * regions * mb, d);  // gradient + input for wgrad
    comm("tp_reducescatter_bwd", "reduce_scatter", "tp", tp, act, regions * mb, d);
    if (embed) {
      comm("embed_tp_reducescatter_fwd", "reduce_scatter", "tp", tp, act, mb, d);
      comm("embed_tp_allgather_bwd", "allgather", "tp", tp, act, mb, d);
    }
    if (logits) {
      comm("logits_tp_allgather_fwd", "allgather", "tp", tp, act, mb, d);
      comm("logits_tp_reducescatter_bwd", "reduce_scatter", "tp", tp, act, mb, d);
      comm("logits_tp_allgather_bwd", "allgather", "tp", tp, act, mb, d);
    }
    int64_t sp_params = stage_extra_params(m, l, f).sp_allreduced;
    for (int64_t i = f.layer_begin; i < f.layer_end; ++i)
      sp_params = checked_add(sp_params, layer_params(m, l, f, i).sp_allreduced, "parameters of the stage");
    comm("tp_allreduce_sp_grads", "allreduce", "tp", tp, checked_mul(sp_params, gb, "gradient bytes"), 1, g);
  }
  if (logits) comm("xent_tp_allreduce_fwd", "allreduce", "tp", tp, f.tokens * 4, 3 * mb, DType::fp32);
}

// Expert parallelism (balanced routing: this rank's tokens x top_k assignments leave it,
// as many arrive).
void add_ep_ops(CommContext& c) {
  const StepFacts& f = c.f;
  if (f.moe_layers == 0) return;
  const int64_t calls = f.moe_layers * c.mb;
  const int64_t routed = checked_product({f.tokens_sp, c.m.top_k, c.m.hidden, c.b}, "routed token bytes");
  for (const char* role : {"ep_alltoall_dispatch_fwd", "ep_alltoall_combine_fwd",
                           "ep_alltoall_dispatch_bwd", "ep_alltoall_combine_bwd"})
    c.comm(role, "alltoall", "ep", c.l.ep, routed, calls, c.d);
  const int64_t gathered = checked_product({f.tokens, c.m.top_k, c.m.hidden, c.b}, "routed token bytes");
  c.comm("moe_tp_allgather_fwd", "allgather", "tp", c.tp, gathered, calls, c.d);
  c.comm("moe_tp_reducescatter_fwd", "reduce_scatter", "tp", c.tp, gathered, calls, c.d);
  c.comm("moe_tp_reducescatter_bwd", "reduce_scatter", "tp", c.tp, gathered, calls, c.d);
  c.comm("moe_tp_allgather_bwd", "allgather", "tp", c.tp, gathered, calls, c.d);
}

// Context parallelism: the ring passes this rank's K and V chunk (and in backward also
// their gradients) cp - 1 times per layer.
void add_cp_ops(CommContext& c) {
  const ParallelLayout& l = c.l;
  if (l.cp <= 1) return;
  const int64_t kv_bytes =
      checked_product({c.f.tokens, c.m.kv_heads / c.tp, c.m.head_dim + c.m.v_dim(), c.b, 2}, "K and V bytes") / 2;
  c.comm("cp_ring_fwd", "ring", "cp", l.cp, kv_bytes, (l.cp - 1) * c.layers * c.mb, c.d);
  c.comm("cp_ring_bwd", "ring", "cp", l.cp, 2 * kv_bytes, (l.cp - 1) * c.layers * c.mb, c.d);
}

// Pipeline parallelism: one activation message per micro-batch and direction and neighbour.
void add_pp_ops(CommContext& c) {
  const ModelSpec& m = c.m;
  const StepFacts& f = c.f;
  Comm& comm = c.comm;
  if (c.l.pp <= 1) return;
  const int64_t msg = checked_product({f.tokens_sp, m.hidden, c.b}, "activation bytes");
  if (!f.first_stage) {
    comm("pp_recv_fwd", "sendrecv", "pp", 2, msg, c.mb, c.d);
    comm("pp_send_bwd", "sendrecv", "pp", 2, msg, c.mb, c.d);
  }
  if (!f.last_stage) {
    comm("pp_send_fwd", "sendrecv", "pp", 2, msg, c.mb, c.d);
    comm("pp_recv_bwd", "sendrecv", "pp", 2, msg, c.mb, c.d);
  }
  if (m.tied_embeddings && (f.first_stage || f.last_stage) && m.vocab > 0)
    comm("embedding_allreduce_grad", "allreduce", "embedding", 2,
         checked_product({f.vocab_padded / c.tp, m.hidden, c.gb}, "embedding gradient bytes"), 1, c.g);
}

// One data-parallel gradient buffer: the dense parameters over dp x cp ranks, or the experts'
// over dp x cp / ep.
struct DpBuffer {
  std::string prefix;
  int64_t group;
  bool expert;
};

// ZeRO 0-2: per gradient bucket after the last micro-batch.
void add_bucketed_dp_ops(CommContext& c, const DpBuffer& buf, int64_t params) {
  const std::string grp = buf.expert ? "expert_dp" : "dp";
  for (const auto& [size, count] : buckets(params, c.f.dp_bucket_params, buf.group)) {
    if (c.l.zero == 0) {
      c.comm(buf.prefix + "_allreduce_grad", "allreduce", grp, buf.group, checked_mul(size, c.gb, "gradient bytes"),
             count, c.g);
    } else {
      c.comm(buf.prefix + "_reducescatter_grad", "reduce_scatter", grp, buf.group,
             checked_mul(size, c.gb, "gradient bytes"), count, c.g);
      c.comm(buf.prefix + "_allgather_param", "allgather", grp, buf.group, checked_mul(size, c.b, "parameter bytes"),
             count, c.d);
    }
  }
}

// ZeRO-3 / FSDP: one unit per layer and one for the stage's other parameters, every micro-batch.
void add_zero3_ops(CommContext& c, const DpBuffer& buf) {
  const StepFacts& f = c.f;
  const std::string grp = buf.expert ? "expert_dp" : "dp";
  std::map<int64_t, int64_t> units;  // params -> count
  for (int64_t i = f.layer_begin; i < f.layer_end; ++i) {
    const LayerParams p = layer_params(c.m, c.l, f, i);
    units[buf.expert ? p.expert : p.dense] += 1;
  }
  if (!buf.expert) units[stage_extra_params(c.m, c.l, f).dense] += 1;
  for (const auto& [params, count] : units) {
    if (params == 0) continue;
    const int64_t padded = ceil_div(params, buf.group) * buf.group;
    const std::string z = buf.expert ? "zero3_expert" : "zero3";
    const int64_t param_bytes = checked_mul(padded, c.b, "parameter bytes");
    const int64_t grad_bytes = checked_mul(padded, c.gb, "gradient bytes");
    c.comm(z + "_allgather_param_fwd", "allgather", grp, buf.group, param_bytes, count * c.mb, c.d);
    c.comm(z + "_allgather_param_bwd", "allgather", grp, buf.group, param_bytes, count * c.mb, c.d);
    c.comm(z + "_reducescatter_grad", "reduce_scatter", grp, buf.group, grad_bytes, count * c.mb, c.g);
  }
}

// Data parallelism (and ZeRO) over dp x cp ranks; experts over dp x cp / ep.
void add_dp_ops(CommContext& c, const Workload& w) {
  for (const DpBuffer& buf : {DpBuffer{"dp", c.f.dp_group, false}, DpBuffer{"dp_expert", c.f.expert_dp_group, true}}) {
    if (buf.group < 2) continue;
    if (c.l.zero <= 2)
      add_bucketed_dp_ops(c, buf, buf.expert ? w.expert_params : w.dense_params);
    else
      add_zero3_ops(c, buf);
  }
}

}  // namespace

void add_comm_ops(Workload& w) {
  const ModelSpec& m = w.model;
  const ParallelLayout& l = w.layout;
  const StepFacts& f = w.facts;
  const int64_t b = static_cast<int64_t>(dtype_bytes(l.dtype));
  CommContext c{.m = m,
                .l = l,
                .f = f,
                .comm = Comm{w},
                .d = l.dtype,
                .g = l.grad_dtype,
                .b = b,
                .gb = static_cast<int64_t>(dtype_bytes(l.grad_dtype)),
                .mb = f.micro_batches,
                .layers = f.dense_layers + f.moe_layers,
                .tp = l.tp,
                .act = checked_product({f.tokens, m.hidden, b}, "activation bytes (tokens x hidden x dtype)")};
  add_tp_ops(c);
  add_ep_ops(c);
  add_cp_ops(c);
  add_pp_ops(c);
  add_dp_ops(c, w);
}

}  // namespace gpucal::model::detail
