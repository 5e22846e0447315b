// The built-in shape sets as data. Shapes are derived from layer dimensions by the rules
// below (nothing is copied from another suite's tables). Column-major BLAS terms:
// D[m x n] = op(A)[m x k] op(B)[k x n]; for a linear layer Y = X W^T with X of T tokens,
// m = T (tokens), n = output features, k = input features.
#include "bench_gemm/gemm_sets.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/errors.h"

namespace gpucal::gemm {

namespace {

std::string dims(const char* what, int64_t a, const char* b_name, int64_t b) {
  return std::string(what) + "=" + std::to_string(a) + " " + b_name + "=" + std::to_string(b);
}

void add_unique(std::vector<SetShape>& out, std::set<std::tuple<int64_t, int64_t, int64_t>>& seen, SetShape s) {
  if (seen.insert({s.m, s.n, s.k}).second) out.push_back(std::move(s));
}

// m = n = k, powers of two 256..16384.
std::vector<SetShape> square() {
  std::vector<SetShape> out;
  for (int64_t s = 256; s <= 16384; s *= 2) out.push_back({s, s, s, "square " + std::to_string(s)});
  return out;
}

// One transformer layer's forward GEMMs for hidden sizes h = 4096, 5120, 8192 and token
// counts T = 2048..16384 (x2): fused QKV projection (n = 3h, k = h: multi-head attention,
// no grouped-query reduction), attention output projection (h x h), a GELU MLP with the
// usual 4x expansion (up: n = 4h, k = h; down: n = h, k = 4h), and a SwiGLU MLP with
// f = 8h/3 rounded up to a multiple of 256 (4096 -> 11008, 5120 -> 13824, 8192 -> 22016):
// fused gate+up (n = 2f, k = h) and down (n = h, k = f).
std::vector<SetShape> llm() {
  std::vector<SetShape> out;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (int64_t h : {4096, 5120, 8192}) {
    const int64_t f = (8 * h / 3 + 255) / 256 * 256;
    for (int64_t t = 2048; t <= 16384; t *= 2) {
      const std::string base = dims("h", h, "T", t);
      add_unique(out, seen, {t, 3 * h, h, base + " qkv"});
      add_unique(out, seen, {t, h, h, base + " attn-out"});
      add_unique(out, seen, {t, 4 * h, h, base + " mlp-up x4"});
      add_unique(out, seen, {t, h, 4 * h, base + " mlp-down x4"});
      add_unique(out, seen, {t, 2 * f, h, base + " swiglu-gate-up f=" + std::to_string(f)});
      add_unique(out, seen, {t, h, f, base + " swiglu-down f=" + std::to_string(f)});
    }
  }
  return out;
}

// Training-style shapes, three GEMMs per layer (forward, backward-data, backward-weight):
// recurrent cells: gates (4 per hidden unit, LSTM-style) for hidden h = 1024, 2048, 2560
// and minibatch b = 16, 64: forward m = 4h, n = b, k = h; backward-data m = h, n = b,
// k = 4h; backward-weight m = 4h, n = h, k = b.
// Convolutions as implicit GEMM (im2col) for a ResNet-like ladder at batch 16: channels
// C = 64, 128, 256, 512 at spatial sizes 56, 28, 14, 7, 3x3 filters: forward m = C (output
// channels), n = 16 * P * Q (output pixels), k = 9C; backward-data m = 9C, n = 16 P Q,
// k = C; backward-weight m = C, n = 9C, k = 16 P Q.
std::vector<SetShape> deepbench() {
  std::vector<SetShape> out;
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (int64_t h : {1024, 2048, 2560})
    for (int64_t b : {16, 64}) {
      const std::string base = "rnn " + dims("h", h, "b", b);
      add_unique(out, seen, {4 * h, b, h, base + " fwd"});
      add_unique(out, seen, {h, b, 4 * h, base + " bwd-data"});
      add_unique(out, seen, {4 * h, h, b, base + " bwd-weight"});
    }
  const std::pair<int64_t, int64_t> ladder[] = {{64, 56}, {128, 28}, {256, 14}, {512, 7}};
  for (const auto& [c, s] : ladder) {
    const int64_t pixels = 16 * s * s;
    const std::string base = "conv3x3 " + dims("C", c, "PQ", s) + "x" + std::to_string(s) + " N=16";
    add_unique(out, seen, {c, pixels, 9 * c, base + " fwd"});
    add_unique(out, seen, {9 * c, pixels, c, base + " bwd-data"});
    add_unique(out, seen, {c, 9 * c, pixels, base + " bwd-weight"});
  }
  return out;
}

// Alignment and wave sweep: m = k = 4096, n walks 4096..4352 in steps of 8 (elements), so
// alignment (n mod 16, 64, 128, 256) and the tile count in the last wave change point by
// point. The same walk on any axis: --n 4096:4352:+8.
std::vector<SetShape> align() {
  std::vector<SetShape> out;
  for (int64_t n = 4096; n <= 4352; n += 8) out.push_back({4096, n, 4096, "n mod 256 = " + std::to_string(n % 256)});
  return out;
}

}  // namespace

const std::vector<ShapeSet>& shape_sets() {
  static const std::vector<ShapeSet> sets = {
      {"square", "m = n = k = 256..16384 (x2)", square()},
      {"llm", "transformer layer GEMMs: h = 4096, 5120, 8192; T = 2048..16384 tokens; QKV, attention out, GELU x4 and SwiGLU MLPs",
       llm()},
      {"deepbench", "training-style: LSTM-style recurrent cells and 3x3 convolutions as implicit GEMM, forward and both backward GEMMs",
       deepbench()},
      {"align", "alignment/wave sweep: m = k = 4096, n = 4096..4352 step 8", align()},
  };
  return sets;
}

const ShapeSet& find_shape_set(const std::string& name) {
  std::string known;
  for (const auto& s : shape_sets()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw UsageError("--set: unknown set '" + name + "' (known: " + known + ")");
}

}  // namespace gpucal::gemm
