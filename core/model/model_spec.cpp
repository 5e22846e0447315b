#include "core/model/model_spec.h"

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "core/errors.h"
#include "core/output/file_io.h"
#include "core/output/strict_json.h"
#include "core/model/bounds.h"

namespace gpucal::model {

namespace {

[[noreturn]] void bad(const ModelSpec& m, const std::string& what) {
  throw UsageError("model '" + m.name + "': " + what);
}

void positive(const ModelSpec& m, const char* field, int64_t v) {
  if (v < 1) bad(m, std::string(field) + " must be at least 1, got " + std::to_string(v));
}

void non_negative(const ModelSpec& m, const char* field, int64_t v) {
  if (v < 0) bad(m, std::string(field) + " must be non-negative, got " + std::to_string(v));
}

}  // namespace

void validate(const ModelSpec& m) {
  if (m.name.empty()) throw UsageError("model: name must not be empty");
  positive(m, "layers", m.layers);
  positive(m, "hidden", m.hidden);
  positive(m, "heads", m.heads);
  positive(m, "kv_heads", m.kv_heads);
  positive(m, "head_dim", m.head_dim);
  positive(m, "seq", m.seq);
  check_bounds(m);
  for (auto [field, v] :
       std::initializer_list<std::pair<const char*, int64_t>>{{"v_head_dim", m.v_head_dim},
                                                              {"ffn", m.ffn},
                                                              {"vocab", m.vocab},
                                                              {"experts", m.experts},
                                                              {"top_k", m.top_k},
                                                              {"expert_ffn", m.expert_ffn},
                                                              {"shared_experts", m.shared_experts},
                                                              {"shared_ffn", m.shared_ffn},
                                                              {"dense_layers", m.dense_layers},
                                                              {"q_lora_rank", m.q_lora_rank},
                                                              {"kv_lora_rank", m.kv_lora_rank},
                                                              {"rope_head_dim", m.rope_head_dim}})
    non_negative(m, field, v);
  if (m.heads % m.kv_heads != 0)
    bad(m, "heads (" + std::to_string(m.heads) + ") must be a multiple of kv_heads (" +
               std::to_string(m.kv_heads) + ")");
  if (m.norm != "rmsnorm" && m.norm != "layernorm")
    bad(m, "norm must be rmsnorm or layernorm, got '" + m.norm + "'");
  if (m.position != "rope" && m.position != "learned" && m.position != "none")
    bad(m, "position must be rope, learned or none, got '" + m.position + "'");
  if (!(m.dropout >= 0 && m.dropout < 1)) bad(m, "dropout must be in [0, 1)");
  if (m.tied_embeddings && m.vocab == 0) bad(m, "tied_embeddings needs a vocab");
  const bool has_dense = !m.moe() || m.dense_layers > 0;
  if (has_dense && m.ffn < 1) bad(m, "ffn must be at least 1 (dense MLP layers exist)");
  if (m.moe()) {
    if (m.top_k < 1 || m.top_k > m.experts)
      bad(m, "top_k must be between 1 and experts (" + std::to_string(m.experts) + "), got " +
                 std::to_string(m.top_k));
    positive(m, "expert_ffn", m.expert_ffn);
    if (m.dense_layers > m.layers) bad(m, "dense_layers exceeds layers");
    if (m.shared_experts > 0) positive(m, "shared_ffn", m.shared_ffn);
  } else {
    for (auto [field, v] :
         std::initializer_list<std::pair<const char*, int64_t>>{{"top_k", m.top_k},
                                                                {"expert_ffn", m.expert_ffn},
                                                                {"shared_experts", m.shared_experts},
                                                                {"dense_layers", m.dense_layers}})
      if (v != 0) bad(m, std::string(field) + " needs experts > 0");
  }
  if (m.mla()) {
    if (m.kv_heads != m.heads)
      bad(m, "multi-head latent attention (kv_lora_rank > 0) needs kv_heads = heads");
    if (m.rope_head_dim < 1 || m.rope_head_dim >= m.head_dim)
      bad(m, "rope_head_dim must be between 1 and head_dim - 1 with kv_lora_rank > 0");
  } else if (m.q_lora_rank > 0 || m.rope_head_dim > 0) {
    bad(m, "q_lora_rank and rope_head_dim need kv_lora_rank > 0 (multi-head latent attention)");
  }
}

ModelSpec scaled(const ModelSpec& m, int64_t n) {
  if (n < 1) throw UsageError("--scale: expected a divisor of at least 1, got " + std::to_string(n));
  if (n == 1) return m;
  ModelSpec s = m;
  auto divide = [&](const char* field, int64_t& v) {
    if (v % n != 0)
      throw UsageError("--scale " + std::to_string(n) + ": model '" + m.name + "' " + field + " (" +
                       std::to_string(v) + ") is not divisible by " + std::to_string(n));
    v /= n;
  };
  divide("hidden", s.hidden);
  divide("head_dim", s.head_dim);
  divide("v_head_dim", s.v_head_dim);
  divide("ffn", s.ffn);
  divide("expert_ffn", s.expert_ffn);
  divide("shared_ffn", s.shared_ffn);
  divide("q_lora_rank", s.q_lora_rank);
  divide("kv_lora_rank", s.kv_lora_rank);
  divide("rope_head_dim", s.rope_head_dim);
  s.vocab = (m.vocab + n - 1) / n;
  s.name = m.name + "/scale" + std::to_string(n);
  return s;
}

// ---- JSON ---------------------------------------------------------------------------------

namespace {

struct Field {
  std::function<void(ModelSpec&, const nlohmann::json&, const std::string&)> read;
  std::function<nlohmann::json(const ModelSpec&)> write;
};

template <typename T>
Field field(T ModelSpec::*member) {
  return {[member](ModelSpec& m, const nlohmann::json& v, const std::string& where) {
            if constexpr (std::is_same_v<T, bool>) {
              if (!v.is_boolean()) throw UsageError(where + ": expected true or false");
              m.*member = v.get<bool>();
            } else if constexpr (std::is_same_v<T, std::string>) {
              if (!v.is_string()) throw UsageError(where + ": expected a string");
              m.*member = v.get<std::string>();
            } else if constexpr (std::is_same_v<T, double>) {
              if (!v.is_number()) throw UsageError(where + ": expected a number");
              m.*member = v.get<double>();
            } else {
              if (!v.is_number_integer()) throw UsageError(where + ": expected an integer");
              // 2^64 - 1 read as int64_t would be -1.
              if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX})
                throw UsageError(where + ": " + v.dump() + " is out of range");
              m.*member = v.get<int64_t>();
            }
          },
          [member](const ModelSpec& m) { return nlohmann::json(m.*member); }};
}

const std::map<std::string, Field>& fields() {
  static const std::map<std::string, Field> f = {
      {"name", field(&ModelSpec::name)},
      {"source", field(&ModelSpec::source)},
      {"layers", field(&ModelSpec::layers)},
      {"hidden", field(&ModelSpec::hidden)},
      {"heads", field(&ModelSpec::heads)},
      {"kv_heads", field(&ModelSpec::kv_heads)},
      {"head_dim", field(&ModelSpec::head_dim)},
      {"v_head_dim", field(&ModelSpec::v_head_dim)},
      {"ffn", field(&ModelSpec::ffn)},
      {"gated", field(&ModelSpec::gated)},
      {"vocab", field(&ModelSpec::vocab)},
      {"tied_embeddings", field(&ModelSpec::tied_embeddings)},
      {"norm", field(&ModelSpec::norm)},
      {"causal", field(&ModelSpec::causal)},
      {"seq", field(&ModelSpec::seq)},
      {"bias", field(&ModelSpec::bias)},
      {"dropout", field(&ModelSpec::dropout)},
      {"position", field(&ModelSpec::position)},
      {"experts", field(&ModelSpec::experts)},
      {"top_k", field(&ModelSpec::top_k)},
      {"expert_ffn", field(&ModelSpec::expert_ffn)},
      {"shared_experts", field(&ModelSpec::shared_experts)},
      {"shared_ffn", field(&ModelSpec::shared_ffn)},
      {"dense_layers", field(&ModelSpec::dense_layers)},
      {"q_lora_rank", field(&ModelSpec::q_lora_rank)},
      {"kv_lora_rank", field(&ModelSpec::kv_lora_rank)},
      {"rope_head_dim", field(&ModelSpec::rope_head_dim)},
  };
  return f;
}

}  // namespace

ModelSpec model_from_json(const nlohmann::json& doc, const std::string& origin) {
  if (!doc.is_object()) throw UsageError(origin + ": expected a JSON object of model fields");
  for (const char* required : {"name", "layers", "hidden", "heads", "seq"})
    if (!doc.contains(required)) throw UsageError(origin + ": missing required field '" + required + "'");
  ModelSpec m;
  m.source = origin;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    auto f = fields().find(it.key());
    if (f == fields().end()) throw UsageError(origin + ": unknown field '" + it.key() + "'");
    f->second.read(m, it.value(), origin + ": field '" + it.key() + "'");
  }
  if (!doc.contains("kv_heads")) m.kv_heads = m.heads;
  if (!doc.contains("head_dim") && m.heads > 0) {
    if (m.hidden % m.heads != 0)
      throw UsageError(origin + ": hidden is not a multiple of heads; give head_dim explicitly");
    m.head_dim = m.hidden / m.heads;
  }
  try {
    validate(m);
  } catch (const UsageError& e) {
    throw UsageError(origin + ": " + e.what());
  }
  return m;
}

ModelSpec load_model_config(const std::string& path) {
  if (const std::string why = not_a_regular_file(path); !why.empty())
    throw UsageError("--model-config: '" + path + "' " + why);
  std::ifstream in(path);
  if (!in) throw UsageError("--model-config: cannot read '" + path + "'");
  nlohmann::json doc;
  std::stringstream text;
  text << in.rdbuf();
  try {
    doc = parse_json_unique_keys(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    throw UsageError("--model-config " + path + ": not valid JSON (" + what.substr(what.find(' ') + 1) + ")");
  } catch (const DuplicateKeyError& e) {
    throw UsageError("--model-config " + path + ": " + e.what() + " (which one is meant?)");
  }
  return model_from_json(doc, path);
}

nlohmann::json to_json(const ModelSpec& m) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, f] : fields()) out[name] = f.write(m);
  return out;
}

}  // namespace gpucal::model
