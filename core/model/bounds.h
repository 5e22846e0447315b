// The largest values a model and a layout may take, and overflow-checked integer arithmetic
// for the derivation. The bounds are far above any published model or cluster yet keep every
// product the derivation forms (parameters of a layer, tokens x width x bytes of a message,
// layers x micro-batches x cp calls) inside int64; the products that can still leave it for
// extreme but bounded inputs (message bytes, parameter totals, tokens per expert, calls per
// step) go through checked_mul / checked_add, so a step is either exact or a one-line
// UsageError, never a wrapped negative number. docs/modeling.md, "Flags (every bench)", lists them.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/layout.h"
#include "core/model/model_spec.h"

namespace gpucal::model {

namespace limits {
constexpr int64_t kLayers = 10000;                   // layers, dense_layers, --layers
constexpr int64_t kWidth = 1 << 20;                  // hidden, ffn, expert_ffn, shared_ffn, MLA ranks
constexpr int64_t kHeads = 1 << 16;                  // heads, kv_heads, experts, shared_experts, top_k
constexpr int64_t kHeadDim = 1 << 16;                // head_dim, v_head_dim, rope_head_dim
constexpr int64_t kVocab = int64_t{1} << 30;         // vocab
constexpr int64_t kSeq = 1 << 24;                    // seq (model and --seq)
constexpr int64_t kRanks = 1 << 20;                  // each of tp, pp, dp, cp, ep; --scale
constexpr int64_t kWorld = 1 << 24;                  // tp x pp x dp x cp
constexpr int64_t kMicroBatch = 1 << 20;             // --micro-batch (sequences)
constexpr int64_t kGlobalBatch = int64_t{1} << 30;   // --global-batch (sequences)
constexpr int64_t kBucketParams = int64_t{1} << 40;  // --dp-bucket-params
}  // namespace limits

// a x b or a + b of non-negative values; UsageError "<what> overflows 64-bit integers (...)"
// naming the inputs when the result does not fit.
int64_t checked_mul(int64_t a, int64_t b, const std::string& what);
int64_t checked_add(int64_t a, int64_t b, const std::string& what);
// a / b rounded up, for non-negative a and positive b (a + b - 1 must fit: it does within the bounds).
inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The product of all factors, checked at every step.
int64_t checked_product(std::initializer_list<int64_t> factors, const std::string& what);

// UsageError (one line, the field and its bound) for a model field above its bound.
void check_bounds(const ModelSpec& m);
// UsageError (one line, the flag and its bound) for a layout value outside its range,
// including the world size tp x pp x dp x cp.
void check_bounds(const ParallelLayout& l);

}  // namespace gpucal::model
