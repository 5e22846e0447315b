// A transformer as a performance model needs it: the hyper-parameters that fix every GEMM,
// attention call, memory-bound op and message of a training step. Plain data; presets from
// published hyper-parameters (presets.cpp, each citing its source) or a JSON file
// (--model-config, validated field by field with one-line errors).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpucal::model {

struct ModelSpec {
  std::string name;
  std::string source;  // where the hyper-parameters come from (paper, config file)

  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;       // query heads
  int64_t kv_heads = 0;    // key/value heads: = heads (MHA), fewer (GQA), 1 (MQA)
  int64_t head_dim = 0;    // query/key head dimension (MLA: nope part + rope part)
  int64_t v_head_dim = 0;  // value head dimension; 0 = head_dim
  int64_t ffn = 0;         // dense MLP intermediate size (0 for an all-MoE model)
  bool gated = false;      // gated MLP (SwiGLU: gate and up, then down) or not (GELU: up, then down)
  int64_t vocab = 0;       // 0: no token embedding and no logits (a ViT's patch embedding is not modelled)
  bool tied_embeddings = false;
  std::string norm = "rmsnorm";  // rmsnorm | layernorm
  bool causal = true;
  int64_t seq = 0;                // the sequence length the model was trained at (default of --seq)
  bool bias = false;              // linear layers carry biases
  double dropout = 0;             // hidden dropout probability (0: plain residual adds)
  std::string position = "rope";  // rope | learned (a seq x hidden table on the first stage) | none

  // Mixture of experts (experts == 0: dense).
  int64_t experts = 0;         // routed experts per MoE layer
  int64_t top_k = 0;           // routed experts per token
  int64_t expert_ffn = 0;      // intermediate size of one routed expert
  int64_t shared_experts = 0;  // experts every token goes through (DeepSeek)
  int64_t shared_ffn = 0;      // intermediate size of one shared expert
  int64_t dense_layers = 0;    // leading layers with the dense MLP instead of MoE (DeepSeek-V3: 3)

  // Multi-head latent attention (kv_lora_rank > 0): low-rank Q and KV projections.
  int64_t q_lora_rank = 0;  // 0: full-rank Q projection
  int64_t kv_lora_rank = 0;
  int64_t rope_head_dim = 0;  // decoupled RoPE part of head_dim, shared by all heads for K

  bool moe() const { return experts > 0; }
  bool mla() const { return kv_lora_rank > 0; }
  int64_t v_dim() const { return v_head_dim > 0 ? v_head_dim : head_dim; }
  // Layer index i (0-based) has an MoE MLP.
  bool is_moe_layer(int64_t i) const { return moe() && i >= dense_layers; }
};

// Throws UsageError with one line naming the first bad field ("model 'x': heads must be ...").
void validate(const ModelSpec& m);

// --scale N: every width divided by N (hidden, head_dim, v_head_dim, ffn, expert_ffn,
// shared_ffn, the MLA ranks and rope dim; vocab rounded up), head and expert counts, layers
// and sequence kept, so each GEMM keeps its aspect and shrinks ~N^2 in flops. A width N does
// not divide exactly is a UsageError naming it. N = 1 returns the model unchanged.
ModelSpec scaled(const ModelSpec& m, int64_t n);

// Presets by name (gpt3-175b, llama3-8b, llama3-70b, llama3-405b, mixtral-8x7b, deepseek-v3,
// vit-era5); throws UsageError listing the names for an unknown one.
const ModelSpec& find_preset(const std::string& name);
const std::vector<ModelSpec>& presets();

// A model from JSON: the field names of ModelSpec; required: name, layers, hidden, heads,
// ffn (unless every layer is MoE), seq; optional fields take the defaults above (kv_heads =
// heads, head_dim = hidden / heads). Unknown fields and wrong types are errors. Throws
// UsageError naming the file and field.
ModelSpec model_from_json(const nlohmann::json& doc, const std::string& origin);
ModelSpec load_model_config(const std::string& path);
nlohmann::json to_json(const ModelSpec& m);

}  // namespace gpucal::model
