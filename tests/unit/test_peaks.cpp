#include <gtest/gtest.h>

#include "core/formulas/peaks.h"

using namespace gpucal;

namespace {
DeviceInfo gpu(const std::string& name, const std::string& arch, int units, double mhz) {
  DeviceInfo d;
  d.backend = arch.rfind("gfx", 0) == 0 ? "hip" : "cuda";
  d.name = name;
  d.arch = arch;
  d.compute_units = units;
  d.clock_mhz = mhz;
  return d;
}
}  // namespace

TEST(Peaks, TableEntriesForKnownDevices) {
  EXPECT_DOUBLE_EQ(peak_tflops(gpu("NVIDIA H100 80GB HBM3", "sm_90", 132, 1980), DType::bf16).tflops, 989.4);
  EXPECT_DOUBLE_EQ(peak_tflops(gpu("NVIDIA H100 PCIe", "sm_90", 114, 1755), DType::fp16).tflops, 756.0);
  EXPECT_DOUBLE_EQ(peak_tflops(gpu("NVIDIA H200", "sm_90", 132, 1980), DType::fp8_e4m3).tflops, 1978.9);
  EXPECT_DOUBLE_EQ(peak_tflops(gpu("NVIDIA A100-SXM4-80GB", "sm_80", 108, 1410), DType::tf32).tflops, 156.0);
  EXPECT_DOUBLE_EQ(peak_tflops(gpu("AMD Instinct MI300X", "gfx942", 304, 2100), DType::bf16).tflops, 1307.4);
  EXPECT_DOUBLE_EQ(peak_tflops(gpu("AMD Instinct MI250X", "gfx90a", 110, 1700), DType::fp16).tflops, 191.5);
  EXPECT_EQ(peak_tflops(gpu("NVIDIA H100 80GB HBM3", "sm_90", 132, 1980), DType::bf16).source, "table:H100 SXM");
  EXPECT_DOUBLE_EQ(peak_memory_gbps(gpu("NVIDIA H200", "sm_90", 132, 1980)), 4800);
  EXPECT_DOUBLE_EQ(peak_memory_gbps(gpu("NVIDIA H100 80GB HBM3", "sm_90", 132, 1980)), 3350);
}

TEST(Peaks, ComputedFallbackForUnlistedDevices) {
  // An unlisted Hopper part: 100 SMs x 1500 MHz x 4096 flop/clk = 614.4 TFLOP/s.
  Peak p = peak_tflops(gpu("NVIDIA Future GPU", "sm_90", 100, 1500), DType::bf16);
  EXPECT_NEAR(p.tflops, 614.4, 1e-9);
  EXPECT_EQ(p.source.rfind("computed:", 0), 0u);
  // A100 has no fp8 in the table: the fallback says sm_80 has none either.
  EXPECT_DOUBLE_EQ(peak_tflops(gpu("NVIDIA A100-SXM4-80GB", "sm_80", 108, 1410), DType::fp8_e4m3).tflops, 0.0);
  DeviceInfo host;
  host.backend = "host";
  host.arch = "x86_64-avx2";
  host.compute_units = 2;
  host.clock_mhz = 2500;
  EXPECT_NEAR(peak_tflops(host, DType::fp64).tflops, 2 * 2.5e9 * 16 / 1e12, 1e-12);
  EXPECT_NEAR(peak_tflops(host, DType::fp32).tflops, 2 * 2.5e9 * 32 / 1e12, 1e-12);
}

TEST(Peaks, AbovePeakIsFlagged) {
  Peak p{100.0, "test"};
  EXPECT_FALSE(check_against_peak(80.0, p).above_peak);
  EXPECT_DOUBLE_EQ(check_against_peak(80.0, p).efficiency, 0.8);
  EXPECT_TRUE(check_against_peak(100.5, p).above_peak);
  EXPECT_FALSE(check_against_peak(5.0, Peak{0, "unknown"}).above_peak);  // no peak, no verdict
}

TEST(Peaks, VectorRatesFromTheTable) {
  const DeviceInfo h100 = gpu("NVIDIA H100 80GB HBM3", "sm_90", 132, 1980);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(h100, DType::fp32).tflops, 66.9);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(h100, DType::bf16).tflops, 133.8);
  EXPECT_EQ(vector_peak_tflops(h100, DType::fp16).source, "table:H100 SXM (vector)");
  EXPECT_DOUBLE_EQ(vector_peak_tflops(gpu("NVIDIA H100 PCIe", "sm_90", 114, 1755), DType::fp16).tflops, 102.4);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(gpu("NVIDIA H100 NVL", "sm_90", 132, 1785), DType::fp32).tflops, 60.0);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(gpu("NVIDIA H200", "sm_90", 132, 1980), DType::fp16).tflops, 133.8);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(gpu("NVIDIA A100-SXM4-80GB", "sm_80", 108, 1410), DType::fp16).tflops, 78.0);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(gpu("NVIDIA A100-SXM4-80GB", "sm_80", 108, 1410), DType::bf16).tflops, 39.0);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(gpu("AMD Instinct MI250X", "gfx90a", 110, 1700), DType::fp32).tflops, 47.85);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(gpu("AMD Instinct MI300X", "gfx942", 304, 2100), DType::fp64).tflops, 81.7);
  // The vector rate is far below the tensor-core rate the GEMM peak uses.
  EXPECT_LT(vector_peak_tflops(h100, DType::bf16).tflops, peak_tflops(h100, DType::bf16).tflops / 5);
}

TEST(Peaks, VectorRatesComputedWhereTheTableIsSilent) {
  // The computed rates reproduce the published ones for the parts whose clocks we know:
  // A100 108 SMs x 1410 MHz x 128 = 19.5 TFLOP/s fp32, x 512 = 78 fp16; H100 SXM x 256 = 66.9.
  EXPECT_NEAR(vector_peak_tflops(gpu("NVIDIA Ampere future", "sm_80", 108, 1410), DType::fp32).tflops, 19.49, 0.01);
  EXPECT_NEAR(vector_peak_tflops(gpu("NVIDIA Ampere future", "sm_80", 108, 1410), DType::fp16).tflops, 77.97, 0.01);
  EXPECT_NEAR(vector_peak_tflops(gpu("NVIDIA Hopper future", "sm_90", 132, 1980), DType::fp32).tflops, 66.9, 0.05);
  EXPECT_NEAR(vector_peak_tflops(gpu("AMD Instinct MI250", "gfx90a", 104, 1700), DType::fp32).tflops,
              104 * 1.7e9 * 256 / 1e12, 1e-9);
  DeviceInfo host;
  host.backend = "host";
  host.arch = "x86_64-avx512";
  host.compute_units = 2;
  host.clock_mhz = 3000;
  // 2 cores x 3 GHz x (2 FMA pipes x 16 fp32 lanes x 2 flop): the GEMM fp32 peak's count.
  EXPECT_NEAR(vector_peak_tflops(host, DType::fp32).tflops, 2 * 3e9 * 64 / 1e12, 1e-12);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(host, DType::fp32).tflops, peak_tflops(host, DType::fp32).tflops);
  EXPECT_DOUBLE_EQ(vector_peak_tflops(host, DType::bf16).tflops, 0.0);
  EXPECT_EQ(vector_peak_tflops(host, DType::bf16).source, "unknown");
}
