#include "bench_gemm/gemm_formulas.h"

#include "bench_gemm/gemm_reference.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace gpucal::gemm {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

WaveQuantization wave_quantization(int64_t m, int64_t n, int64_t batch, int64_t tile_m, int64_t tile_n, int sms,
                                   int blocks_per_sm, int64_t split_k) {
  if (m < 1 || n < 1 || batch < 1 || tile_m < 1 || tile_n < 1 || sms < 1 || blocks_per_sm < 1 || split_k < 1)
    throw std::invalid_argument("wave_quantization: extents, tile, SMs, blocks per SM and split-K must be positive");
  WaveQuantization w;
  const int64_t tm = ceil_div(m, tile_m), tn = ceil_div(n, tile_n);
  w.tiles = tm * tn * batch * split_k;
  const int64_t slots = static_cast<int64_t>(sms) * blocks_per_sm;
  w.waves = static_cast<double>(w.tiles) / static_cast<double>(slots);
  w.waves_launched = ceil_div(w.tiles, slots);
  w.wave_efficiency = static_cast<double>(w.tiles) / static_cast<double>(w.waves_launched * slots);
  w.tile_efficiency = static_cast<double>(m) * static_cast<double>(n) /
                      (static_cast<double>(tm * tile_m) * static_cast<double>(tn * tile_n));
  return w;
}

TileShape parse_tile(const std::string& text) {
  TileShape t;
  const auto x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 >= text.size()) return t;
  char* end = nullptr;
  const long long m = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + x) return t;
  const long long n = std::strtoll(text.c_str() + x + 1, &end, 10);
  if (*end != '\0' || m <= 0 || n <= 0) return t;
  t.m = m;
  t.n = n;
  return t;
}

int64_t rotation_copies(size_t set_bytes, size_t cache_bytes) {
  if (set_bytes == 0) throw std::invalid_argument("rotation_copies: empty input set");
  const int64_t others = static_cast<int64_t>((2 * cache_bytes + set_bytes - 1) / set_bytes);
  return std::max<int64_t>(2, others + 1);
}

size_t rotation_stride_bytes(size_t bytes) {
  return (bytes + kOperandAlignBytes - 1) / kOperandAlignBytes * kOperandAlignBytes;
}

int64_t reference_tile_step(int64_t m, int64_t n, int64_t k, int64_t batch, double flop_budget) {
  const int64_t col_tiles = (n + kReferenceTile - 1) / kReferenceTile;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                       static_cast<double>(batch);
  const double step = std::ceil(flops / flop_budget);
  return std::max<int64_t>(1, std::min<int64_t>(col_tiles, static_cast<int64_t>(step)));
}

uint64_t reference_checked_elements(int64_t m, int64_t n, int64_t batch, int64_t step) {
  const int64_t t = kReferenceTile, row_tiles = (m + t - 1) / t, col_tiles = (n + t - 1) / t;
  uint64_t per_batch = 0;
  for (int64_t rt = 0; rt < row_tiles; ++rt) {
    const int64_t rows = std::min<int64_t>(t, m - rt * t);
    for (int64_t ct = rt % step; ct < col_tiles; ct += step)
      per_batch += static_cast<uint64_t>(rows) * static_cast<uint64_t>(std::min<int64_t>(t, n - ct * t));
  }
  return per_batch * static_cast<uint64_t>(batch);
}

double fp8_max_finite(DType t) {
  if (t == DType::fp8_e4m3) return 448.0;
  if (t == DType::fp8_e5m2) return 57344.0;
  throw std::invalid_argument("fp8_max_finite: " + to_string(t) + " is not an fp8 type");
}

double fp8_scale(double amax, DType t) {
  if (!(amax > 0)) throw std::invalid_argument("fp8_scale: amax must be positive");
  return amax / fp8_max_finite(t);
}

}  // namespace gpucal::gemm
