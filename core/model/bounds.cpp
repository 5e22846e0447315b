#include "core/model/bounds.h"

#include <tuple>

#include "core/errors.h"

namespace gpucal::model {

namespace {

[[noreturn]] void overflow(const std::string& what) {
  throw UsageError(what + " overflows 64-bit integers: the model or layout is too large to derive");
}

}  // namespace

int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t out = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &out)) overflow(what);
  return out;
}

int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
  int64_t out = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &out)) overflow(what);
  return out;
}

int64_t checked_product(std::initializer_list<int64_t> factors, const std::string& what) {
  int64_t out = 1;
  for (int64_t f : factors) out = checked_mul(out, f, what);
  return out;
}

void check_bounds(const ModelSpec& m) {
  for (auto [field, v, bound] : std::initializer_list<std::tuple<const char*, int64_t, int64_t>>{
           {"layers", m.layers, limits::kLayers},
           {"dense_layers", m.dense_layers, limits::kLayers},
           {"hidden", m.hidden, limits::kWidth},
           {"ffn", m.ffn, limits::kWidth},
           {"expert_ffn", m.expert_ffn, limits::kWidth},
           {"shared_ffn", m.shared_ffn, limits::kWidth},
           {"q_lora_rank", m.q_lora_rank, limits::kWidth},
           {"kv_lora_rank", m.kv_lora_rank, limits::kWidth},
           {"heads", m.heads, limits::kHeads},
           {"kv_heads", m.kv_heads, limits::kHeads},
           {"experts", m.experts, limits::kHeads},
           {"top_k", m.top_k, limits::kHeads},
           {"shared_experts", m.shared_experts, limits::kHeads},
           {"head_dim", m.head_dim, limits::kHeadDim},
           {"v_head_dim", m.v_head_dim, limits::kHeadDim},
           {"rope_head_dim", m.rope_head_dim, limits::kHeadDim},
           {"vocab", m.vocab, limits::kVocab},
           {"seq", m.seq, limits::kSeq}})
    if (v > bound)
      throw UsageError("model '" + m.name + "': " + field + " must be at most " + std::to_string(bound) + ", got " +
                       std::to_string(v));
}

void check_bounds(const ParallelLayout& l) {
  for (auto [flag, v, bound] : std::initializer_list<std::tuple<const char*, int64_t, int64_t>>{
           {"--tp", l.tp, limits::kRanks},
           {"--pp", l.pp, limits::kRanks},
           {"--dp", l.dp, limits::kRanks},
           {"--cp", l.cp, limits::kRanks},
           {"--ep", l.ep, limits::kRanks},
           {"--micro-batch", l.micro_batch, limits::kMicroBatch}}) {
    if (v < 1) throw UsageError(std::string(flag) + ": expected at least 1, got " + std::to_string(v));
    if (v > bound)
      throw UsageError(std::string(flag) + ": expected at most " + std::to_string(bound) + ", got " + std::to_string(v));
  }
  if (l.seq < 0 || l.seq > limits::kSeq)
    throw UsageError("--seq: expected a sequence length from 1 to " + std::to_string(limits::kSeq) + ", got " +
                     std::to_string(l.seq));
  if (l.global_batch < 0 || l.global_batch > limits::kGlobalBatch)
    throw UsageError("--global-batch: expected 1 to " + std::to_string(limits::kGlobalBatch) + " sequences, got " +
                     std::to_string(l.global_batch));
  if (l.layers < 0 || l.layers > limits::kLayers)
    throw UsageError("--layers: expected a layer count from 1 to " + std::to_string(limits::kLayers) + ", got " +
                     std::to_string(l.layers));
  if (l.scale < 1 || l.scale > limits::kRanks)
    throw UsageError("--scale: expected a divisor from 1 to " + std::to_string(limits::kRanks) + ", got " +
                     std::to_string(l.scale));
  if (l.dp_bucket_params < -1 || l.dp_bucket_params > limits::kBucketParams)
    throw UsageError("--dp-bucket-params: expected auto, 0 (one bucket) or a parameter count up to " +
                     std::to_string(limits::kBucketParams) + ", got " + std::to_string(l.dp_bucket_params));
  // Each factor is at most 2^20, so the product of two fits; the rest is checked against the bound.
  int64_t world = 1;
  for (int64_t f : {l.tp, l.pp, l.dp, l.cp}) {
    world *= f;
    if (world > limits::kWorld)
      throw UsageError("--tp x --pp x --dp x --cp: the layout needs more than " + std::to_string(limits::kWorld) +
                       " ranks (tp=" + std::to_string(l.tp) + " pp=" + std::to_string(l.pp) + " dp=" + std::to_string(l.dp) +
                       " cp=" + std::to_string(l.cp) + ")");
  }
}

}  // namespace gpucal::model
