// How a training step is laid out over ranks (Megatron-LM's conventions, which the flags
// follow): tensor (tp), pipeline (pp), data (dp), context (cp) and expert (ep) parallelism,
// sequence parallelism (sp) over the tensor group, micro-batches, ZeRO stage and the DP
// gradient bucket size. Validated against a model; the derived facts (tokens per micro-batch
// on a rank, micro-batches per step, which layers a pipeline stage holds) live here, once.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/backend/dtype.h"
#include "core/model/model_spec.h"

namespace gpucal::model {

struct ParallelLayout {
  int64_t tp = 1, pp = 1, dp = 1, cp = 1;
  // Expert parallelism: Megatron-Core carves the EP group out of the DP x CP ranks, so ep
  // divides dp * cp; expert weights are split over tp as well (expert tensor parallel = tp,
  // Megatron's default when --expert-tensor-parallel-size is not given).
  int64_t ep = 1;
  bool sp = false;            // sequence parallel: norms, residuals, dropout on seq / tp rows
  int64_t seq = 0;            // 0: the model's training sequence length
  int64_t micro_batch = 1;    // sequences per micro-batch
  int64_t global_batch = 0;   // sequences per step; 0: micro_batch * dp (one micro-batch)
  DType dtype = DType::bf16;  // parameters, activations, GEMM inputs, TP/PP/CP/EP messages
  // The linear layers' GEMM inputs (gemm_dtype()): dtype, or fp8_e4m3 with --dtype fp8 (Transformer Engine's FP8
  // recipe: the projections' and MLPs' GEMMs in fp8 with bf16 outputs; attention, element-wise
  // ops, messages, parameters and the output layer, which Megatron keeps outside TE, in bf16).
  bool fp8_gemms = false;
  DType gemm_dtype() const { return fp8_gemms ? DType::fp8_e4m3 : dtype; }
  // Gradient reduction type. Megatron-LM's arguments.py turns bf16 training into fp32
  // gradient accumulation and all-reduce (accumulate_allreduce_grads_in_fp32).
  DType grad_dtype = DType::fp32;
  int zero = 0;  // 0: DDP allreduce; 1, 2: distributed optimizer (reduce-scatter + all-gather); 3: FSDP
  // Parameters per DP gradient bucket: -1 auto = Megatron-LM's default
  // max(40,000,000, 1,000,000 x dp x cp) (megatron/training/training.py get_model, the size it
  // uses with --overlap-grad-reduce); 0 = one bucket per buffer (Megatron without
  // --overlap-grad-reduce sets bucket_size = None).
  int64_t dp_bucket_params = -1;
  int64_t pp_stage = -1;  // the pipeline stage whose rank the step is derived for; -1: the last
  // Megatron's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split:
  // the embedding (the loss) counts as one layer of the first (last) stage when layers are split.
  bool account_embedding = false, account_loss = false;
  int64_t layers = 0;     // layer subset: the first N layers (0: all)
  int64_t scale = 1;      // --scale N (see scaled() in model_spec.h)

  int64_t world() const { return tp * pp * dp * cp; }
};

// What a layout means for one rank of one model: computed once, used by every derivation.
struct StepFacts {
  int64_t seq = 0;            // sequence length in use
  int64_t tokens = 0;         // T: tokens of one micro-batch on a rank = micro_batch * seq / cp
  int64_t tokens_sp = 0;      // rows of norms/residuals: T / tp with sp, else T
  int64_t micro_batches = 0;  // per step: global_batch / (micro_batch * dp)
  int64_t global_batch = 0;
  int64_t stage = 0;  // pipeline stage of the rank
  bool first_stage = false, last_stage = false;
  int64_t layers_total = 0;                  // layers of the (subset) model
  int64_t layer_begin = 0, layer_end = 0;    // this stage's layers [begin, end)
  int64_t stage_slots = 0;                   // those layers and the embedding / loss counted as layers
  int64_t dense_layers = 0, moe_layers = 0;  // of this stage
  int64_t vocab_padded = 0;                  // Megatron pads the vocabulary to a multiple of 128 x tp
  int64_t dp_group = 1;                      // ranks a dense gradient is reduced over: dp * cp
  int64_t expert_dp_group = 1;               // ranks an expert gradient is reduced over: dp * cp / ep
  int64_t local_experts = 0;                 // experts / ep
  int64_t tokens_per_expert = 0;             // ceil(T * top_k * ep / experts): balanced routing
  int64_t dp_bucket_params = 0;              // resolved bucket size (0: one bucket)
};

// Validates the layout against the model (one-line UsageError naming the flag) and derives
// the facts. `model` is the model as run (after --scale and --layers).
StepFacts derive_facts(const ModelSpec& model, const ParallelLayout& layout);
// The model as the layout runs it: --scale applied, --layers cutting the layer count.
ModelSpec model_as_run(const ModelSpec& model, const ParallelLayout& layout);

nlohmann::json to_json(const ParallelLayout& l);
nlohmann::json to_json(const StepFacts& f);

}  // namespace gpucal::model
