#include "core/model/layout.h"

#include <algorithm>

#include "core/errors.h"
#include "core/model/bounds.h"

namespace gpucal::model {

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

void divides(int64_t value, int64_t by, const std::string& what, const std::string& flag) {
  require(value % by == 0,
          flag + " " + str(by) + ": " + what + " (" + str(value) + ") is not divisible by " + str(by));
}

// The rank's pipeline stage and its layers [layer_begin, layer_end): split as evenly as they go,
// earlier stages taking the extra; with Megatron's accounting, the embedding and the loss take a
// layer's place on the first and the last stage, and the layers with them must split evenly.
void split_stage_layers(const ModelSpec& m, const ParallelLayout& l, StepFacts& f) {
  require(m.layers >= l.pp, "--pp " + str(l.pp) + ": the model as run has only " + str(m.layers) + " layers");
  f.stage = l.pp_stage < 0 ? l.pp - 1 : l.pp_stage;
  require(f.stage < l.pp, "--pp-stage " + str(f.stage) + ": stages are 0.." + str(l.pp - 1));
  const int64_t ae = l.account_embedding ? 1 : 0, al = l.account_loss ? 1 : 0;
  if (ae + al > 0) {
    const int64_t slots = m.layers + ae + al, per = slots / l.pp;
    require(slots % l.pp == 0, "--pp " + str(l.pp) + ": the model's " + str(m.layers) + " layers and the " +
                                   (ae && al ? "embedding and loss" : ae ? "embedding" : "loss") +
                                   " counted as layers (" + str(slots) + ") do not split evenly over the stages");
    f.layer_begin = f.stage == 0 ? 0 : f.stage * per - ae;
    f.layer_end = (f.stage + 1) * per - ae - (f.stage == l.pp - 1 ? al : 0);
  } else {
    const int64_t base = m.layers / l.pp, extra = m.layers % l.pp;
    f.layer_begin = f.stage * base + std::min(f.stage, extra);
    f.layer_end = f.layer_begin + base + (f.stage < extra ? 1 : 0);
  }
  f.stage_slots = f.layer_end - f.layer_begin + (f.stage == 0 ? ae : 0) + (f.stage == l.pp - 1 ? al : 0);
}

}  // namespace

ModelSpec model_as_run(const ModelSpec& model, const ParallelLayout& l) {
  check_bounds(l);
  ModelSpec m = scaled(model, l.scale);
  if (l.layers > 0) {
    require(l.layers <= model.layers, "--layers " + str(l.layers) + ": model '" + model.name + "' has " +
                                          str(model.layers) + " layers");
    m.layers = l.layers;
    m.dense_layers = std::min(m.dense_layers, m.layers);
  }
  return m;
}

StepFacts derive_facts(const ModelSpec& m, const ParallelLayout& l) {
  check_bounds(l);  // every count at least 1 and within its bound, the world size too
  require(l.zero >= 0 && l.zero <= 3, "--zero: expected 0, 1, 2 or 3 (3 = FSDP), got " + str(l.zero));
  require(l.dp_bucket_params >= -1, "--dp-bucket-params: expected auto, 0 (one bucket) or a parameter count");
  const DType d = l.dtype;
  require(d == DType::bf16 || d == DType::fp16 || d == DType::fp32,
          "--dtype " + to_string(d) + ": model-derived runs take bf16, fp16 or fp32");
  require(dtype_is_float(l.grad_dtype) && l.grad_dtype != DType::fp8_e4m3 && l.grad_dtype != DType::fp8_e5m2,
          "--grad-dtype " + to_string(l.grad_dtype) + ": expected fp32, bf16 or fp16");

  StepFacts f;
  f.seq = l.seq > 0 ? l.seq : m.seq;
  // Tensor parallelism splits heads, kv heads and MLP widths (Megatron asserts the same).
  divides(m.heads, l.tp, "heads", "--tp");
  divides(m.kv_heads, l.tp, "kv heads (query groups)", "--tp");
  if (m.ffn > 0) divides(m.ffn, l.tp, "ffn", "--tp");
  if (m.moe()) divides(m.expert_ffn, l.tp, "expert_ffn (expert tensor parallel = tp)", "--tp");
  if (m.shared_experts > 0) divides(m.shared_experts * m.shared_ffn, l.tp, "shared experts' ffn", "--tp");
  // Context parallelism: TE's load-balanced causal ring splits a sequence into 2 x cp chunks.
  const int64_t chunks = l.cp > 1 && m.causal ? 2 * l.cp : l.cp;
  require(f.seq % chunks == 0, "--cp " + str(l.cp) + ": --seq " + str(f.seq) + " is not divisible by " +
                                   str(chunks) +
                                   (chunks != l.cp ? " (2 x cp chunks for a causal model)" : ""));
  f.tokens = checked_mul(l.micro_batch, f.seq, "tokens per micro-batch (--micro-batch x --seq)") / l.cp;
  if (l.sp) {
    require(l.tp > 1, "--sp: sequence parallelism splits over the tensor group and needs --tp > 1");
    require(f.tokens % l.tp == 0,
            "--sp: tokens per micro-batch (" + str(f.tokens) + ") not divisible by --tp " + str(l.tp));
  }
  f.tokens_sp = l.sp ? f.tokens / l.tp : f.tokens;

  // Expert parallelism lives inside DP x CP (Megatron-Core); MoE with TP needs SP there.
  if (m.moe()) {
    divides(m.experts, l.ep, "experts", "--ep");
    require((l.dp * l.cp) % l.ep == 0, "--ep " + str(l.ep) +
                                           ": expert parallelism is carved out of dp x cp (" +
                                           str(l.dp * l.cp) + "), which it must divide");
    require(l.tp == 1 || l.sp, "--tp " + str(l.tp) +
                                   " with an MoE model needs --sp (Megatron-Core requires sequence "
                                   "parallelism for MoE with tensor parallelism)");
    f.local_experts = m.experts / l.ep;
    f.tokens_per_expert =
        (checked_product({f.tokens, m.top_k, l.ep}, "routed tokens (tokens x top_k x ep)") + m.experts - 1) /
        m.experts;
  } else {
    require(l.ep == 1, "--ep " + str(l.ep) + ": model '" + m.name + "' has no experts");
  }

  const int64_t per_step = l.micro_batch * l.dp;  // both at most 2^20
  f.global_batch = l.global_batch > 0 ? l.global_batch : per_step;
  require(f.global_batch % per_step == 0, "--global-batch " + str(f.global_batch) +
                                              " is not a multiple of micro-batch x dp (" + str(per_step) + ")");
  f.micro_batches = f.global_batch / per_step;

  f.layers_total = m.layers;
  split_stage_layers(m, l, f);
  for (int64_t i = f.layer_begin; i < f.layer_end; ++i)
    (m.is_moe_layer(i) ? f.moe_layers : f.dense_layers) += 1;
  // Every op's calls per step is at most (layers + 1) x micro-batches x cp x 4 (derive_*.cpp).
  checked_product({m.layers + 1, f.micro_batches, l.cp, 4}, "calls per step (layers x micro-batches x cp)");
  f.first_stage = f.stage == 0;
  f.last_stage = f.stage == l.pp - 1;

  // megatron/training/tokenizer: _vocab_size_with_padding (make-vocab-size-divisible-by 128).
  const int64_t multiple = 128 * l.tp;
  f.vocab_padded = m.vocab == 0 ? 0 : (m.vocab + multiple - 1) / multiple * multiple;
  f.dp_group = l.dp * l.cp;
  f.expert_dp_group = m.moe() ? l.dp * l.cp / l.ep : 1;
  f.dp_bucket_params =
      l.dp_bucket_params < 0 ? std::max<int64_t>(40000000, 1000000 * f.dp_group) : l.dp_bucket_params;
  return f;
}

nlohmann::json to_json(const ParallelLayout& l) {
  return {{"tp", l.tp},
          {"pp", l.pp},
          {"dp", l.dp},
          {"cp", l.cp},
          {"ep", l.ep},
          {"sp", l.sp},
          {"seq", l.seq},
          {"micro_batch", l.micro_batch},
          {"global_batch", l.global_batch},
          {"dtype", to_string(l.dtype)},
          {"gemm_dtype", to_string(l.gemm_dtype())},
          {"grad_dtype", to_string(l.grad_dtype)},
          {"zero", l.zero},
          {"dp_bucket_params", l.dp_bucket_params},
          {"pp_stage", l.pp_stage},
          {"account_embedding", l.account_embedding},
          {"account_loss", l.account_loss},
          {"layers", l.layers},
          {"scale", l.scale},
          {"world", l.world()}};
}

nlohmann::json to_json(const StepFacts& f) {
  return {{"seq", f.seq},
          {"tokens_per_micro_batch", f.tokens},
          {"norm_rows", f.tokens_sp},
          {"micro_batches", f.micro_batches},
          {"global_batch", f.global_batch},
          {"stage", f.stage},
          {"first_stage", f.first_stage},
          {"last_stage", f.last_stage},
          {"layers_total", f.layers_total},
          {"stage_layers", {f.layer_begin, f.layer_end}},
          {"stage_dense_layers", f.dense_layers},
          {"stage_moe_layers", f.moe_layers},
          {"vocab_padded", f.vocab_padded},
          {"dp_group", f.dp_group},
          {"expert_dp_group", f.expert_dp_group},
          {"local_experts", f.local_experts},
          {"tokens_per_expert", f.tokens_per_expert},
          {"dp_bucket_params", f.dp_bucket_params}};
}

}  // namespace gpucal::model
