// Formulas users rely on, against hand-worked examples: flop and byte counts per dtype,
// tile and wave quantization, the cold-rotate copy count, fp8 per-tensor scales, tolerances.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "bench_gemm/gemm_formulas.h"
#include "bench_gemm/gemm_problem.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"

using namespace gpucal;
using namespace gpucal::gemm;

TEST(GemmCounts, Fp8AndInt8Bytes) {
  // fp8: 1-byte A and B, bf16 D: 4096*1024 + 1024*2048 + 2*4096*2048.
  auto f8 = make_problem(DType::fp8_e4m3, "TN", 4096, 2048, 1024, 1, 1, 0);
  EXPECT_DOUBLE_EQ(f8.flops(), 2.0 * 4096 * 2048 * 1024);
  EXPECT_DOUBLE_EQ(f8.bytes(), 4096.0 * 1024 + 1024.0 * 2048 + 2.0 * 4096 * 2048);
  // int8 with beta: int32 C read and D written, batch 2: 2 * (64*32 + 32*16 + 4*64*16*2).
  auto i8 = make_problem(DType::int8, "TN", 64, 16, 32, 2, 1, 1);
  EXPECT_DOUBLE_EQ(i8.bytes(), 2 * (64.0 * 32 + 32.0 * 16 + 4.0 * 64 * 16 * 2));
  // fp16 with an fp32 output: 2-byte inputs, 4-byte D.
  auto h = make_problem(DType::fp16, "NN", 10, 20, 30, 1, 1, 0, DType::fp32);
  EXPECT_DOUBLE_EQ(h.bytes(), 2.0 * (10 * 30 + 30 * 20) + 4.0 * 10 * 20);
}

TEST(GemmCounts, DtypeColumnsAndDefaults) {
  auto f8 = make_problem(DType::fp8_e5m2, "TN", 16, 16, 16, 1, 1, 0);
  EXPECT_EQ(f8.input, DType::fp8_e5m2);
  EXPECT_EQ(f8.input_b, DType::fp8_e4m3);  // e5m2 x e4m3: no library offers e5m2 x e5m2
  EXPECT_EQ(f8.output, DType::bf16);
  EXPECT_EQ(f8.compute_type(), DType::fp32);
  auto i8 = make_problem(DType::int8, "TN", 16, 16, 16, 1, 2, 0);
  EXPECT_EQ(i8.output, DType::int32);
  EXPECT_EQ(i8.compute_type(), DType::int32);
  Row row;
  make_problem(DType::fp8_e4m3, "TN", 16, 16, 16, 1, 1, 0, DType::fp16).describe(row);
  EXPECT_EQ(row.get("dtype"), "fp8_e4m3");
  EXPECT_EQ(row.get("out_dtype"), "fp16");
  EXPECT_EQ(row.get("compute_type"), "fp32");
  EXPECT_EQ(row.get("b_dtype"), "fp8_e4m3");
  EXPECT_FALSE(row.get("scale_a").empty());
  // A non-default output type is part of the point's name.
  EXPECT_EQ(make_problem(DType::fp8_e4m3, "TN", 8, 8, 8, 1, 1, 0, DType::fp16).point("x", "hot"),
            "gemm/x/fp8_e4m3/TN/m8/n8/k8/b1/outfp16/hot");
  EXPECT_EQ(make_problem(DType::fp8_e4m3, "TN", 8, 8, 8, 1, 1, 0).point("x", "hot", "autotune4"),
            "gemm/x/fp8_e4m3/TN/m8/n8/k8/b1/autotune4/hot");
}

TEST(GemmCounts, BadCombinationsAreUsageErrors) {
  EXPECT_THROW(make_problem(DType::int8, "TN", 8, 8, 8, 1, 0.5, 0), UsageError);  // int32 scaling
  EXPECT_THROW(make_problem(DType::int8, "TN", 8, 8, 8, 1, 1, 0, DType::fp32), UsageError);
  EXPECT_THROW(make_problem(DType::fp8_e4m3, "TN", 8, 8, 8, 1, 1, 0, DType::fp8_e4m3), UsageError);
  EXPECT_THROW(make_problem(DType::fp32, "NN", 8, 8, 8, 1, 1, 0, DType::fp16), UsageError);
  EXPECT_THROW(make_problem(DType::tf32, "NN", 8, 8, 8, 1, 1, 0, DType::bf16), UsageError);
  EXPECT_THROW(make_problem(DType::uint8, "NN", 8, 8, 8, 1, 1, 0), UsageError);
  EXPECT_THROW(make_problem(DType::fp32, "NN", 8, 8, 8, 0, 1, 0), UsageError);
}

TEST(WaveQuantization, HandWorkedH100Examples) {
  // 4096^2 on 132 SMs with 128x256 tiles: 32 * 16 = 512 tiles, 512/132 = 3.879 waves,
  // 4 waves launched, 512 / (4*132) = 0.9697 of the slots busy.
  auto w = wave_quantization(4096, 4096, 1, 128, 256, 132);
  EXPECT_EQ(w.tiles, 512);
  EXPECT_NEAR(w.waves, 512.0 / 132, 1e-12);
  EXPECT_EQ(w.waves_launched, 4);
  EXPECT_NEAR(w.wave_efficiency, 512.0 / 528, 1e-12);
  EXPECT_DOUBLE_EQ(w.tile_efficiency, 1.0);
  // n = 4104 (8 past a multiple of 256): ceil(4104/256) = 17 column tiles, 544 tiles,
  // 4.12 waves, a fifth wave with 16 of 132 slots: efficiency 544 / 660 = 0.824.
  auto v = wave_quantization(4096, 4104, 1, 128, 256, 132);
  EXPECT_EQ(v.tiles, 544);
  EXPECT_EQ(v.waves_launched, 5);
  EXPECT_NEAR(v.wave_efficiency, 544.0 / 660, 1e-12);
  EXPECT_NEAR(v.tile_efficiency, 4104.0 / (17 * 256), 1e-12);
}

TEST(WaveQuantization, BatchSplitKAndBlocksPerSm) {
  // A100: 108 SMs, 1024^2 with 128x128 tiles = 64 tiles: less than one wave (0.593).
  auto a = wave_quantization(1024, 1024, 1, 128, 128, 108);
  EXPECT_EQ(a.tiles, 64);
  EXPECT_EQ(a.waves_launched, 1);
  EXPECT_NEAR(a.wave_efficiency, 64.0 / 108, 1e-12);
  // batch 3 and split-K 2 multiply the CTAs: 64 * 3 * 2 = 384; 2 blocks per SM: 216 slots,
  // 1.78 waves, 2 launched, 384 / 432.
  auto b = wave_quantization(1024, 1024, 3, 128, 128, 108, 2, 2);
  EXPECT_EQ(b.tiles, 384);
  EXPECT_NEAR(b.waves, 384.0 / 216, 1e-12);
  EXPECT_EQ(b.waves_launched, 2);
  EXPECT_NEAR(b.wave_efficiency, 384.0 / 432, 1e-12);
  // One tile of 64x64 for a 1x1 output: tile efficiency 1/4096.
  EXPECT_NEAR(wave_quantization(1, 1, 1, 64, 64, 1).tile_efficiency, 1.0 / 4096, 1e-15);
  EXPECT_THROW(wave_quantization(16, 16, 1, 0, 64, 132), std::invalid_argument);
  EXPECT_THROW(wave_quantization(16, 16, 1, 64, 64, 0), std::invalid_argument);
}

TEST(WaveQuantization, ParseTile) {
  EXPECT_EQ(parse_tile("128x256").m, 128);
  EXPECT_EQ(parse_tile("128x256").n, 256);
  EXPECT_FALSE(parse_tile("undefined").known());
  EXPECT_FALSE(parse_tile("").known());
  EXPECT_FALSE(parse_tile("64x").known());
  EXPECT_FALSE(parse_tile("8xAUTO").known());
}

TEST(RotationCopies, ExceedTwiceTheCache) {
  // 1 MiB per copy, 50 MiB L2: 100 other copies stream 2x L2 between reuses, 101 in all.
  EXPECT_EQ(rotation_copies(1u << 20, 50u << 20), 101);
  // A set larger than 2x L2 still alternates between two copies.
  EXPECT_EQ(rotation_copies(128u << 20, 50u << 20), 2);
  EXPECT_EQ(rotation_copies(100u << 20, 50u << 20), 2);
  // 3 MiB, 4 MiB cache: ceil(8/3) = 3 others, 4 copies.
  EXPECT_EQ(rotation_copies(3u << 20, 4u << 20), 4);
  EXPECT_THROW(rotation_copies(0, 1), std::invalid_argument);
}

TEST(ReferenceCheck, SmallShapesCheckEveryElementLargeOnesACoveringSetOfTiles) {
  EXPECT_EQ(reference_tile_step(4096, 4096, 4096, 1, kReferenceFlopBudget), 1);  // 0.14 TFLOP
  EXPECT_EQ(reference_checked_elements(1000, 520, 3, 1), 1000u * 520u * 3u);
  // 8192^3 = 1.1 TFLOP within the 2 TFLOP budget: all; the llm set's largest, 16384 x 32768
  // x 8192 = 8.8 TFLOP: every 5th column tile.
  EXPECT_EQ(reference_tile_step(8192, 8192, 8192, 1, kReferenceFlopBudget), 1);
  EXPECT_EQ(reference_tile_step(16384, 32768, 8192, 1, kReferenceFlopBudget), 5);
  // Never more than one column tile per row of tiles: 8.8 TFLOP over only 2 column tiles.
  EXPECT_EQ(reference_tile_step(524288, 128, 65536, 1, kReferenceFlopBudget), 2);
  EXPECT_EQ(reference_checked_elements(524288, 128, 1, 2), 524288u * 64u);
  const int64_t step = reference_tile_step(16384, 16384, 16384, 1, kReferenceFlopBudget);
  EXPECT_EQ(step, 5);
  // step consecutive rows of tiles cover every column tile, ragged edges included.
  const int64_t m = 70 * 64, n = 10 * 64 + 17, col_tiles = 11;
  std::vector<int> covered(col_tiles, 0);
  for (int64_t rt = 0; rt < step; ++rt)
    for (int64_t ct = rt % step; ct < col_tiles; ct += step) ++covered[static_cast<size_t>(ct)];
  for (int c : covered) EXPECT_EQ(c, 1);
  // Checked elements: each row of tiles checks ~1/step of the columns.
  const uint64_t checked = reference_checked_elements(m, n, 1, step);
  EXPECT_GT(checked, static_cast<uint64_t>(m * n / step) * 9 / 10);
  EXPECT_LT(checked, static_cast<uint64_t>(m * n / step) * 11 / 10);
}

TEST(RotationCopies, StrideIsTheSizeRoundedUpTo256Bytes) {
  EXPECT_EQ(kOperandAlignBytes, 256u);
  EXPECT_EQ(rotation_stride_bytes(256), 256u);
  EXPECT_EQ(rotation_stride_bytes(257), 512u);
  EXPECT_EQ(rotation_stride_bytes(33 * 17 * 2), 1280u);  // a 33x17 fp16 operand: 1122 bytes
  EXPECT_EQ(rotation_stride_bytes(1), 256u);
}

TEST(Fp8Quantization, ScalesAgainstHandWorkedValues) {
  EXPECT_DOUBLE_EQ(fp8_max_finite(DType::fp8_e4m3), 448.0);
  EXPECT_DOUBLE_EQ(fp8_max_finite(DType::fp8_e5m2), 57344.0);
  // amax 3.5 over 448 is 2^-7 exactly; amax 1 over 57344 = 2^-16 * 8/7.
  EXPECT_DOUBLE_EQ(fp8_scale(3.5, DType::fp8_e4m3), 0.0078125);
  EXPECT_DOUBLE_EQ(fp8_scale(1.0, DType::fp8_e5m2), 1.0 / 57344.0);
  EXPECT_THROW(fp8_scale(1.0, DType::bf16), std::invalid_argument);
  EXPECT_THROW(fp8_scale(0.0, DType::fp8_e4m3), std::invalid_argument);
  // x = 0.75 with amax 3.5: q = 0.75 / 2^-7 = 96, exact in e4m3 (1.5 * 2^6); dequantizing
  // gives 0.75 back. x = 1.0 -> q = 128 = 2^7 exact. x = 0.7 -> q = 89.6 rounds to 88
  // (e4m3 spacing 8 in [64, 128)), dequantized 0.6875.
  const double s = fp8_scale(3.5, DType::fp8_e4m3);
  auto roundtrip = [&](double x) { return elem::e4m3_to_float(elem::float_to_e4m3(static_cast<float>(x / s))) * s; };
  EXPECT_DOUBLE_EQ(roundtrip(0.75), 0.75);
  EXPECT_DOUBLE_EQ(roundtrip(1.0), 1.0);
  EXPECT_DOUBLE_EQ(roundtrip(0.7), 0.6875);
  // The problem's scales are the float-rounded amax-1 scales.
  auto p = make_problem(DType::fp8_e4m3, "TN", 8, 8, 8, 1, 1, 0);
  EXPECT_DOUBLE_EQ(p.scale_a, static_cast<float>(1.0 / 448));
  EXPECT_DOUBLE_EQ(p.scale_b, static_cast<float>(1.0 / 448));
}

TEST(Tolerance, Fp8Int8AndGpuReference) {
  EXPECT_EQ(tolerance(make_problem(DType::int8, "TN", 8, 8, 4096, 1, 1, 0)), 0.0);  // exact
  // fp8 -> bf16, K = 1024: 2 * 2^-8 + 4 * 32 * 2^-14.
  auto f8 = make_problem(DType::fp8_e4m3, "TN", 8, 8, 1024, 1, 1, 0);
  EXPECT_NEAR(tolerance(f8), 2 * std::ldexp(1.0, -8) + 4 * 32 * std::ldexp(1.0, -14), 1e-15);
  // The GPU reference adds its own fp32 accumulation: 4 sqrt(K) 2^-24.
  auto f32 = make_problem(DType::fp32, "NN", 8, 8, 1024, 1, 1, 0);
  EXPECT_NEAR(tolerance(f32, true) - tolerance(f32), 4 * 32 * std::ldexp(1.0, -24), 1e-18);
  auto f64 = make_problem(DType::fp64, "NN", 8, 8, 1024, 1, 1, 0);
  EXPECT_LT(tolerance(f64, true), 1e-12);
}
