#include "bench_attention/attention_sets.h"

#include "core/errors.h"

namespace gpucal::attention {

const std::vector<std::string>& named_set_names() {
  static const std::vector<std::string> names = {"llm", "long"};
  return names;
}

std::vector<SetShape> named_set(const std::string& name) {
  std::vector<SetShape> out;
  if (name == "llm") {
    constexpr int64_t kTokens = 16384, kHeads = 16, kHeadDim = 128;
    for (int64_t seq = 512; seq <= 16384; seq *= 2) out.push_back({kTokens / seq, kHeads, kHeads, seq, seq, kHeadDim});
  } else if (name == "long") {
    for (int64_t seq = 8192; seq <= 262144; seq *= 2) out.push_back({1, 16, 16, seq, seq, 128});
  } else {
    throw UsageError("--set: expected llm or long, got '" + name + "'");
  }
  return out;
}

}  // namespace gpucal::attention
