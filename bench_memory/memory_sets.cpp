#include "bench_memory/memory_sets.h"

#include "core/errors.h"

namespace gpucal::memory {

namespace {

using K = Kernel;

void add_rows(std::vector<SetPoint>& out, std::initializer_list<Kernel> kernels, int64_t rows, int64_t cols) {
  for (Kernel k : kernels) out.push_back({k, Dims{0, rows, cols}});
}

// Every STREAM-family row of the kernel table, in its order.
void add_stream(std::vector<SetPoint>& out, const std::vector<int64_t>& bytes) {
  for (const KernelDesc& k : kernel_table())
    if (k.family == Family::stream)
      for (int64_t b : bytes) out.push_back({k.id, Dims{}, b});
}

// One layer's elementwise and normalization ops for `tokens` x `hidden`.
void add_layer(std::vector<SetPoint>& out, int64_t tokens, int64_t hidden) {
  add_rows(out, {K::layernorm_fwd, K::layernorm_bwd, K::rmsnorm_fwd, K::rmsnorm_bwd, K::residual_add,
                 K::dropout_residual_add},
           tokens, hidden);
  add_rows(out, {K::gelu_fwd, K::gelu_bwd}, tokens, 4 * hidden);
  add_rows(out, {K::swiglu_fwd, K::swiglu_bwd}, tokens, swiglu_ffn(hidden));
}

std::vector<SetPoint> llm() {
  std::vector<SetPoint> out;
  std::vector<int64_t> bytes;
  for (int64_t b = 4096; b <= (int64_t{1} << 30); b *= 2) bytes.push_back(b);  // 4 KiB .. 1 GiB per array
  add_stream(out, bytes);
  out.push_back({K::fma_chain, Dims{int64_t{1} << 24, 0, 0}});
  for (int64_t hidden : {4096, 8192})
    for (int64_t tokens : {4096, 16384}) add_layer(out, tokens, hidden);
  // Attention scores of 4096 tokens: rows = tokens x heads (head_dim 128), cols = sequence.
  for (int64_t hidden : {4096, 8192})
    for (int64_t seq : {2048, 4096}) add_rows(out, {K::softmax_fwd, K::softmax_bwd}, 4096 * (hidden / 128), seq);
  for (int64_t tokens : {4096, 16384})
    for (int64_t vocab : {32000, 128256}) add_rows(out, {K::cross_entropy_fwd, K::cross_entropy_bwd}, tokens, vocab);
  for (int64_t params : {int64_t{1} << 26, int64_t{1} << 28}) out.push_back({K::adamw_step, Dims{params, 0, 0}});
  return out;
}

std::vector<SetPoint> quick() {
  std::vector<SetPoint> out;
  add_stream(out, {int64_t{4} << 20, int64_t{256} << 20});
  out.push_back({K::fma_chain, Dims{int64_t{1} << 24, 0, 0}});
  add_layer(out, 4096, 4096);
  add_rows(out, {K::softmax_fwd, K::softmax_bwd}, 4096 * 32, 2048);
  add_rows(out, {K::cross_entropy_fwd, K::cross_entropy_bwd}, 4096, 32000);
  out.push_back({K::adamw_step, Dims{int64_t{1} << 26, 0, 0}});
  return out;
}

}  // namespace

int64_t swiglu_ffn(int64_t hidden) { return (8 * hidden / 3 + 255) / 256 * 256; }

const std::vector<std::string>& set_names() {
  static const std::vector<std::string> names{"llm", "quick"};
  return names;
}

std::vector<SetPoint> named_set(const std::string& name) {
  if (name == "llm") return llm();
  if (name == "quick") return quick();
  throw UsageError("--set: unknown set '" + name + "' (expected llm or quick)");
}

}  // namespace gpucal::memory
