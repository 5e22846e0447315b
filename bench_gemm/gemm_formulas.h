// The arithmetic that explains a GEMM row, each formula once: tile and wave quantization,
// how many input copies the cold-rotate regime cycles through, and fp8 per-tensor scales.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/backend/dtype.h"

namespace gpucal::gemm {

// Tile and wave quantization of one launch (docs/field-reference.md, "Wave quantization"):
//   tiles = ceil(M/tile_m) * ceil(N/tile_n) * batch * split_k    (one CTA per output tile
//           and K slice),
//   waves = tiles / (SMs * blocks_per_SM)                          (fractional: 3.88 means
//           three full waves and a last one 88% full),
//   wave_efficiency = tiles / (ceil(waves) * SMs * blocks_per_SM)  (share of the CTA slots
//           in the waves launched that do work).
// blocks_per_SM is 1 unless known (libraries do not report occupancy).
struct WaveQuantization {
  int64_t tiles = 0;
  double waves = 0;
  int64_t waves_launched = 0;  // ceil(waves)
  double wave_efficiency = 0;
  // Share of the tile grid's area covering real output: M*N / (ceil(M/tm)*tm * ceil(N/tn)*tn).
  double tile_efficiency = 0;
};
// Throws std::invalid_argument for non-positive extents, tiles or SM counts.
WaveQuantization wave_quantization(int64_t m, int64_t n, int64_t batch, int64_t tile_m, int64_t tile_n, int sms,
                                   int blocks_per_sm = 1, int64_t split_k = 1);

// "128x256" -> {128, 256}; {0, 0} for anything else ("undefined", "").
struct TileShape {
  int64_t m = 0, n = 0;
  bool known() const { return m > 0 && n > 0; }
};
TileShape parse_tile(const std::string& text);

// Copies of the inputs the cold-rotate regime cycles through: between two uses of one copy
// the other copies stream at least 2x the last-level cache through it, so
//   copies = ceil(2 * cache_bytes / set_bytes) + 1, and at least 2,
// where set_bytes is one copy of everything a launch reads (A, B, and C when beta != 0).
int64_t rotation_copies(size_t set_bytes, size_t cache_bytes);
// Rotated copies start on 256-byte boundaries: cuBLASLt's and hipBLASLt's heuristics assume
// operands aligned as cudaMalloc/hipMalloc align them (256 bytes), and a copy packed right
// behind an odd-sized one would get a slower kernel, or none. Copy i starts at
// i * rotation_stride_bytes(bytes) = i * (bytes rounded up to a multiple of 256).
constexpr size_t kOperandAlignBytes = 256;
size_t rotation_stride_bytes(size_t bytes);

// The GPU reference check (gemm_reference.h) costs 2*m*n*k*batch flop on a plain fp32
// kernel (order 10 TFLOP/s): seconds to minutes for the llm set's largest shapes. Above
// flop_budget it checks every row of 64x64 tiles but every step-th column tile only, with
//   step = min(column tiles, ceil(2*m*n*k*batch / flop_budget)),
// shifted by one per row of tiles so that step rows of tiles cover every column tile.
constexpr double kReferenceFlopBudget = 2e12;
int64_t reference_tile_step(int64_t m, int64_t n, int64_t k, int64_t batch, double flop_budget);
// Elements of D in the tiles the check covers with that step (all m*n*batch at step 1).
uint64_t reference_checked_elements(int64_t m, int64_t n, int64_t batch, int64_t step);

// fp8 per-tensor scaling: values x in [-amax, amax] are stored as q = x / scale with
// scale = amax / max_finite(fp8 type), so q spans the format's range; the GEMM multiplies
// scale_a * scale_b back in. max_finite: e4m3 448, e5m2 57344. Throws for non-fp8 types.
double fp8_max_finite(DType t);
double fp8_scale(double amax, DType t);
// Inputs are drawn uniformly in [-amax, amax) of logical value before quantization.
constexpr double kFp8InputAmax = 1.0;

}  // namespace gpucal::gemm
