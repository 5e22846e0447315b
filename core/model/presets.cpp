// Model presets from published hyper-parameters. Each cites where its numbers come from;
// fields a source does not state say what we assumed.
#include "core/errors.h"
#include "core/model/model_spec.h"

namespace gpucal::model {

namespace {

// GPT-3 175B: Brown et al., "Language Models are Few-Shot Learners", arXiv:2005.14165,
// Table 2.1 (n_layers 96, d_model 12288, n_heads 96, d_head 128, n_ctx 2048) and Sec. 2.1
// ("the same model and architecture as GPT-2": feed-forward 4 x d_model, LayerNorm, learned
// positions, tied embeddings, the GPT-2 BPE vocabulary of 50257 tokens). Dropout is not
// published: 0.
ModelSpec gpt3_175b() {
  return {.name = "gpt3-175b",
          .source = "Brown et al. 2020, arXiv:2005.14165, Table 2.1 and Sec. 2.1 (GPT-2 architecture)",
          .layers = 96,
          .hidden = 12288,
          .heads = 96,
          .kv_heads = 96,
          .head_dim = 128,
          .ffn = 4 * 12288,
          .gated = false,
          .vocab = 50257,
          .tied_embeddings = true,
          .norm = "layernorm",
          .causal = true,
          .seq = 2048,
          .bias = true,
          .position = "learned"};
}

// Llama 3: Llama Team, "The Llama 3 Herd of Models", arXiv:2407.21783, Table 3 (layers,
// model dimension, FFN dimension, attention heads, 8 key/value heads, SwiGLU, RoPE) and
// Sec. 3.1 (8K-token pre-training sequences). Vocabulary: the released config.json's
// vocab_size 128256 (the paper rounds it to 128K); RMSNorm, no biases, untied embeddings
// as in the released 8B/70B/405B configs.
std::vector<ModelSpec> llama3_family() {
  const std::string llama3 =
      "Llama Team 2024, arXiv:2407.21783, Table 3; vocab_size from the released config.json";
  std::vector<ModelSpec> p;
  p.push_back({.name = "llama3-8b",
               .source = llama3,
               .layers = 32,
               .hidden = 4096,
               .heads = 32,
               .kv_heads = 8,
               .head_dim = 128,
               .ffn = 14336,
               .gated = true,
               .vocab = 128256,
               .norm = "rmsnorm",
               .seq = 8192});
  p.push_back({.name = "llama3-70b",
               .source = llama3,
               .layers = 80,
               .hidden = 8192,
               .heads = 64,
               .kv_heads = 8,
               .head_dim = 128,
               .ffn = 28672,
               .gated = true,
               .vocab = 128256,
               .norm = "rmsnorm",
               .seq = 8192});
  p.push_back({.name = "llama3-405b",
               .source = llama3,
               .layers = 126,
               .hidden = 16384,
               .heads = 128,
               .kv_heads = 8,
               .head_dim = 128,
               .ffn = 53248,
               .gated = true,
               .vocab = 128256,
               .norm = "rmsnorm",
               .seq = 8192});
  return p;
}

// Mixtral 8x7B: Jiang et al., "Mixtral of Experts", arXiv:2401.04088, Table 1 (dim 4096,
// n_layers 32, head_dim 128, hidden_dim 14336, n_heads 32, n_kv_heads 8, context_len 32768,
// vocab_size 32000, num_experts 8, top_k_experts 2); every layer's MLP is a SwiGLU MoE.
ModelSpec mixtral_8x7b() {
  return {.name = "mixtral-8x7b",
          .source = "Jiang et al. 2024, arXiv:2401.04088, Table 1",
          .layers = 32,
          .hidden = 4096,
          .heads = 32,
          .kv_heads = 8,
          .head_dim = 128,
          .ffn = 0,
          .gated = true,
          .vocab = 32000,
          .norm = "rmsnorm",
          .seq = 32768,
          .experts = 8,
          .top_k = 2,
          .expert_ffn = 14336};
}

// DeepSeek-V3: DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, Sec. 4.2
// (61 layers, hidden 7168, 128 heads of dimension 128, KV compression 512, query compression
// 1536, decoupled RoPE dimension 64 per head; every MLP but the first three is MoE with 1
// shared and 256 routed experts of intermediate size 2048, 8 routed experts per token;
// 4K-token pre-training sequences). The dense MLP size 18432 and vocab_size 129280 are the
// released config.json's. MLA is modelled by its projections (q down/up, kv down/up); the
// attention kernel runs with head_dim 192 (128 + 64) for both Q.K and P.V, so its P.V part
// is counted at 192 instead of the value dimension 128 (attention flops +25%). The
// sigmoid router is modelled as a softmax; the multi-token-prediction module is left out.
ModelSpec deepseek_v3() {
  return {
      .name = "deepseek-v3",
      .source =
          "DeepSeek-AI 2024, arXiv:2412.19437, Sec. 4.2; ffn and vocab_size from the released config.json",
      .layers = 61,
      .hidden = 7168,
      .heads = 128,
      .kv_heads = 128,
      .head_dim = 192,
      .v_head_dim = 128,
      .ffn = 18432,
      .gated = true,
      .vocab = 129280,
      .norm = "rmsnorm",
      .seq = 4096,
      .experts = 256,
      .top_k = 8,
      .expert_ffn = 2048,
      .shared_experts = 1,
      .shared_ffn = 2048,
      .dense_layers = 3,
      .q_lora_rank = 1536,
      .kv_lora_rank = 512,
      .rope_head_dim = 64};
}

// Long-sequence ViT of the NERSC study: Subramanian et al., "Comprehensive Performance
// Modeling and System Design Insights for Foundation Models", arXiv:2410.00273; its code
// (github.com/ShashankSubramanian/transformer-perf-estimates, models.py `vit_era5`:
// l = 64800, e = 12288, h = 64, depth = 48; run_configs.py: f = 4e). 64800 tokens are a
// 720 x 1440 ERA5 grid in 4 x 4 patches. A ViT block: LayerNorm, GELU MLP, full (non-causal)
// attention; the patch embedding and the output head are not modelled (vocab 0).
ModelSpec vit_era5() {
  return {
      .name = "vit-era5",
      .source = "Subramanian et al. 2024, arXiv:2410.00273; transformer-perf-estimates models.py vit_era5",
      .layers = 48,
      .hidden = 12288,
      .heads = 64,
      .kv_heads = 64,
      .head_dim = 192,
      .ffn = 4 * 12288,
      .gated = false,
      .vocab = 0,
      .norm = "layernorm",
      .causal = false,
      .seq = 64800,
      .bias = true,
      .position = "none"};
}

// In the order --help lists them.
std::vector<ModelSpec> make_presets() {
  std::vector<ModelSpec> p{gpt3_175b()};
  const std::vector<ModelSpec> llama3 = llama3_family();
  p.insert(p.end(), llama3.begin(), llama3.end());
  p.insert(p.end(), {mixtral_8x7b(), deepseek_v3(), vit_era5()});
  for (const auto& m : p) validate(m);
  return p;
}

}  // namespace

const std::vector<ModelSpec>& presets() {
  static const std::vector<ModelSpec> p = make_presets();
  return p;
}

const ModelSpec& find_preset(const std::string& name) {
  std::string names;
  for (const auto& m : presets()) {
    if (m.name == name) return m;
    names += (names.empty() ? "" : ", ") + m.name;
  }
  throw UsageError("--model: unknown model '" + name + "' (presets: " + names +
                   "; or --model-config FILE.json)");
}

}  // namespace gpucal::model
