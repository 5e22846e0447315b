// `gpucal list presets`: each preset's hyper-parameters in the columns docs/modeling.md shows,
// written from the ModelSpec fields (core/model/model_spec.h), and the preset's source.
#include <sstream>
#include <string>
#include <vector>

#include "app/list/registry_listings.h"
#include "core/model/model_spec.h"

namespace gpucal::calibration {

namespace {

using model::ModelSpec;

std::string preset_int(int64_t v) {
  return std::to_string(v);
}

std::string preset_heads(const ModelSpec& m) {
  return m.mla() ? preset_int(m.heads) + " (MLA)" : preset_int(m.heads) + " / " + preset_int(m.kv_heads);
}

std::string preset_head_dim(const ModelSpec& m) {
  std::string out = preset_int(m.head_dim);
  if (m.rope_head_dim > 0)
    out += " (" + preset_int(m.head_dim - m.rope_head_dim) + " + " + preset_int(m.rope_head_dim) + " rope)";
  if (m.v_dim() != m.head_dim) out += ", value " + preset_int(m.v_dim());
  return out;
}

std::string preset_ffn(const ModelSpec& m) {
  const std::string activation = m.gated ? "SwiGLU" : "GELU";
  if (!m.moe()) return preset_int(m.ffn) + " " + activation;
  std::string out;
  if (m.dense_layers > 0) out += preset_int(m.dense_layers) + " dense x " + preset_int(m.ffn) + ", then ";
  out += preset_int(m.experts) + " experts x " + preset_int(m.expert_ffn) + " top-" + preset_int(m.top_k);
  if (m.shared_experts > 0)
    out += " + " + preset_int(m.shared_experts) + " shared" +
           (m.shared_ffn != m.expert_ffn ? " x " + preset_int(m.shared_ffn) : "");
  return out + ", " + activation;
}

std::string preset_vocab(const ModelSpec& m) {
  if (m.vocab == 0) return "none";
  return preset_int(m.vocab) + (m.tied_embeddings ? " (tied)" : "");
}

// What the other columns do not say: the mask, the norm, biases, positions, dropout, MLA ranks.
std::string preset_other(const ModelSpec& m) {
  std::vector<std::string> out;
  if (!m.causal) out.emplace_back("non-causal");
  out.emplace_back(m.norm == "layernorm" ? "LayerNorm" : m.norm == "rmsnorm" ? "RMSNorm" : m.norm);
  if (m.bias) out.emplace_back("biases");
  if (m.position == "learned") out.emplace_back("learned positions");
  if (m.position == "none") out.emplace_back("no position encoding");
  if (m.dropout > 0) {
    std::ostringstream p;
    p << "dropout " << m.dropout;
    out.push_back(p.str());
  }
  if (m.mla())
    out.push_back("MLA " +
                  (m.q_lora_rank > 0 ? "q rank " + preset_int(m.q_lora_rank) + ", " : std::string()) +
                  "kv rank " + preset_int(m.kv_lora_rank));
  return registry::join(out);
}

}  // namespace

registry::Listing preset_listing() {
  registry::Listing t{.columns = {"name", "layers", "hidden", "heads / kv", "head dim", "FFN", "vocab", "seq",
                                  "other", "source"}};
  for (const ModelSpec& m : model::presets())
    t.rows.push_back({m.name, preset_int(m.layers), preset_int(m.hidden), preset_heads(m), preset_head_dim(m),
                      preset_ffn(m), preset_vocab(m), preset_int(m.seq), preset_other(m), m.source});
  return t;
}

}  // namespace gpucal::calibration
