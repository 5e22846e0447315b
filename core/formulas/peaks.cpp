#include "core/formulas/peaks.h"

#include <sstream>
#include <vector>

namespace gpucal {

namespace {

// Published dense peaks (vendor datasheets), TFLOP/s, matrix units where they exist.
// Order of columns: fp64, fp32, tf32, fp16, bf16, fp8, int8; memory GB/s.
// MI250X figures are per GCD: each GCD is one device to the runtime.
struct TableEntry {
  const char* match;   // substring of the device name
  const char* label;
  double fp64, fp32, tf32, fp16, bf16, fp8, int8, mem_gbps;
};
const std::vector<TableEntry>& table() {
  static const std::vector<TableEntry> t = {
      {"H200", "H200 SXM", 66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, 4800},
      {"H100 PCIe", "H100 PCIe", 51.2, 51.2, 378.0, 756.0, 756.0, 1513.0, 1513.0, 2000},
      {"H100 NVL", "H100 NVL", 60.0, 60.0, 417.5, 835.0, 835.0, 1670.5, 1670.5, 3900},
      {"H100", "H100 SXM", 66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9, 3350},
      {"A100-SXM4-80GB", "A100 SXM 80GB", 19.5, 19.5, 156.0, 312.0, 312.0, 0, 624.0, 2039},
      {"A100 80GB PCIe", "A100 PCIe 80GB", 19.5, 19.5, 156.0, 312.0, 312.0, 0, 624.0, 1935},
      {"A100", "A100 40GB", 19.5, 19.5, 156.0, 312.0, 312.0, 0, 624.0, 1555},
      {"MI250X", "MI250X (one GCD)", 47.85, 47.85, 0, 191.5, 191.5, 0, 191.5, 1638.4},
      {"MI300X", "MI300X", 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 5300},
  };
  return t;
}

const TableEntry* lookup(const DeviceInfo& d) {
  if (d.backend == "host") return nullptr;
  for (const auto& e : table())
    if (d.name.find(e.match) != std::string::npos) return &e;
  return nullptr;
}

double table_value(const TableEntry& e, DType t) {
  switch (t) {
    case DType::fp64: return e.fp64;
    case DType::fp32: return e.fp32;
    case DType::tf32: return e.tf32;
    case DType::fp16: return e.fp16;
    case DType::bf16: return e.bf16;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: return e.fp8;
    case DType::int8: return e.int8;
    default: return 0;
  }
}

// Dense flop per clock per compute unit. NVIDIA by compute capability (tensor cores for
// tf32/16-bit/fp8/int8, FMA units for fp32/fp64 on consumer parts), AMD CDNA by gfx
// family, the host by SIMD width (2 FMA pipes x lanes x 2 flop).
double per_unit_per_clock(const DeviceInfo& d, DType t) {
  const std::string& a = d.arch;
  if (d.backend == "host") {
    const double lanes64 = a.find("avx512") != std::string::npos ? 8 : (a.find("avx2") != std::string::npos ? 4 : 2);
    switch (t) {
      case DType::fp64: return 2 * lanes64 * 2;
      case DType::fp32: return 2 * lanes64 * 2 * 2;
      default: return 0;
    }
  }
  if (a.rfind("sm_", 0) == 0) {
    const int cc = std::stoi(a.substr(3));
    const bool hopper = cc >= 90, ampere_dc = cc == 80;
    switch (t) {
      case DType::fp64: return hopper ? 256 : (ampere_dc ? 128 : 4);
      case DType::fp32: return hopper ? 256 : 128;
      case DType::tf32: return hopper ? 2048 : 1024;
      case DType::fp16:
      case DType::bf16: return hopper ? 4096 : (ampere_dc ? 2048 : 1024);
      case DType::fp8_e4m3:
      case DType::fp8_e5m2: return hopper ? 8192 : (cc >= 89 ? 2048 : 0);
      case DType::int8: return hopper ? 8192 : (ampere_dc ? 4096 : 2048);
      default: return 0;
    }
  }
  if (a.rfind("gfx94", 0) == 0) {
    switch (t) {
      case DType::fp64:
      case DType::fp32: return 256;
      case DType::tf32: return 1024;
      case DType::fp16:
      case DType::bf16: return 2048;
      case DType::fp8_e4m3:
      case DType::fp8_e5m2:
      case DType::int8: return 4096;
      default: return 0;
    }
  }
  if (a.rfind("gfx90a", 0) == 0) {
    switch (t) {
      case DType::fp64:
      case DType::fp32: return 256;
      case DType::fp16:
      case DType::bf16:
      case DType::int8: return 1024;
      default: return 0;
    }
  }
  return 0;
}

// Vector (non-tensor) rates, TFLOP/s, dense, boost clock. Sources:
//  - H100 SXM5 / PCIe: NVIDIA H100 Tensor Core GPU Architecture white paper, Table 3
//    (FP64 33.5 / 25.6, FP32 66.9 / 51.2, FP16 and BF16 non-Tensor 133.8 / 102.4).
//  - H200: the same GH100 SXM part and clocks as H100 SXM (H200 datasheet: FP64 34, FP32 67;
//    it lists no non-tensor FP16/BF16, taken as H100 SXM's).
//  - H100 NVL: datasheet FP64 30, FP32 60; non-tensor FP16/BF16 not published, taken as
//    2 x FP32 as on every Hopper part in the white paper.
//  - A100 (SXM and PCIe, 40/80 GB, 1410 MHz): NVIDIA A100 white paper, Table 1 (FP64 9.7,
//    FP32 19.5, FP16 non-Tensor 78, BF16 non-Tensor 39).
//  - MI250X, per GCD (one device to the runtime; half the OAM): AMD MI250X datasheet vector
//    FP64 47.9 and packed FP32 95.7 per OAM. FP16: v_pk_fma_f16 issues at the packed-FP32
//    rate (2 FMA per lane per clock); BF16 has no vector FMA on CDNA 2 and runs in FP32:
//    both bounded by the packed-FP32 rate.
//  - MI300X: ROCm documentation, MI300 microarchitecture, peak table (vector FP64 81.7,
//    vector FP32 163.4 at 256 flop/clock/CU). FP16/BF16: the same reasoning as MI250X.
// A figure not published by the vendor is an upper bound derived as said, so a row above it
// is still an error; its efficiency may read low if the derivation is generous.
struct VectorEntry {
  const char* match;  // substring of the device name, tried in order
  const char* label;
  double fp64, fp32, fp16, bf16;
};
const std::vector<VectorEntry>& vector_table() {
  static const std::vector<VectorEntry> t = {
      {.match = "H200", .label = "H200 SXM", .fp64 = 33.5, .fp32 = 66.9, .fp16 = 133.8, .bf16 = 133.8},
      {.match = "H100 PCIe", .label = "H100 PCIe", .fp64 = 25.6, .fp32 = 51.2, .fp16 = 102.4, .bf16 = 102.4},
      {.match = "H100 NVL", .label = "H100 NVL", .fp64 = 30.0, .fp32 = 60.0, .fp16 = 120.0, .bf16 = 120.0},
      {.match = "H100", .label = "H100 SXM", .fp64 = 33.5, .fp32 = 66.9, .fp16 = 133.8, .bf16 = 133.8},
      {.match = "A100", .label = "A100", .fp64 = 9.7, .fp32 = 19.5, .fp16 = 78.0, .bf16 = 39.0},
      {.match = "MI250X", .label = "MI250X (one GCD)", .fp64 = 23.95, .fp32 = 47.85, .fp16 = 47.85, .bf16 = 47.85},
      {.match = "MI300X", .label = "MI300X", .fp64 = 81.7, .fp32 = 163.4, .fp16 = 163.4, .bf16 = 163.4},
  };
  return t;
}

// Vector flop per clock per compute unit, for devices the table lacks: NVIDIA by compute
// capability (A100: 32 FP64, 64 FP32 lanes per SM, FP16 4x and BF16 2x FP32; Hopper: 64
// FP64, 128 FP32, FP16/BF16 2x; other parts 128 FP32 lanes, 16-bit at the FP32 rate), CDNA
// 2/3 (64 lanes, FP64 1 and FP32/16-bit 2 FMA per lane per clock), the host by SIMD width
// (2 FMA pipes x lanes x 2 flop, fp32 and fp64 only).
double vector_per_unit_per_clock(const DeviceInfo& d, DType t) {
  const std::string& a = d.arch;
  const bool half = t == DType::fp16 || t == DType::bf16;
  if (d.backend == "host") return half ? 0 : per_unit_per_clock(d, t);
  if (a.rfind("sm_", 0) == 0) {
    const int cc = std::stoi(a.substr(3));
    const double fp64 = cc >= 90 ? 128 : cc == 80 ? 64 : 4, fp32 = cc == 80 ? 128 : 256;
    switch (t) {
      case DType::fp64: return fp64;
      case DType::fp32: return fp32;
      case DType::fp16: return cc >= 90 ? 512 : cc == 80 ? 512 : fp32;
      case DType::bf16: return cc >= 90 ? 512 : cc == 80 ? 256 : fp32;
      default: return 0;
    }
  }
  if (a.rfind("gfx90a", 0) == 0 || a.rfind("gfx94", 0) == 0) {
    switch (t) {
      case DType::fp64: return 128;
      case DType::fp32:
      case DType::fp16:
      case DType::bf16: return 256;
      default: return 0;
    }
  }
  return 0;
}

}  // namespace

Peak vector_peak_tflops(const DeviceInfo& device, DType t) {
  Peak p;
  if (device.backend != "host")
    for (const auto& e : vector_table())
      if (device.name.find(e.match) != std::string::npos) {
        p.tflops = t == DType::fp64 ? e.fp64 : t == DType::fp32 ? e.fp32 : t == DType::fp16 ? e.fp16
                 : t == DType::bf16 ? e.bf16 : 0;
        p.source = std::string("table:") + e.label + " (vector)";
        if (p.tflops > 0) return p;
        break;
      }
  const double per_clock = vector_per_unit_per_clock(device, t);
  p.tflops = device.compute_units * device.clock_mhz * 1e6 * per_clock / 1e12;
  std::ostringstream s;
  s << "computed:" << device.compute_units << " units x " << device.clock_mhz << " MHz x " << per_clock
    << " vector flop/clk";
  p.source = p.tflops > 0 ? s.str() : "unknown";
  return p;
}

Peak peak_tflops(const DeviceInfo& device, DType math) {
  Peak p;
  if (const TableEntry* e = lookup(device)) {
    p.tflops = table_value(*e, math);
    p.source = std::string("table:") + e->label;
    if (p.tflops > 0) return p;
  }
  const double per_clock = per_unit_per_clock(device, math);
  p.tflops = device.compute_units * device.clock_mhz * 1e6 * per_clock / 1e12;
  std::ostringstream s;
  s << "computed:" << device.compute_units << " units x " << device.clock_mhz << " MHz x " << per_clock << " flop/clk";
  p.source = p.tflops > 0 ? s.str() : "unknown";
  return p;
}

double peak_memory_gbps(const DeviceInfo& device) {
  if (const TableEntry* e = lookup(device)) return e->mem_gbps;
  // DDR/HBM: 2 transfers per memory clock x bus width (GPUs report the effective clock).
  if (device.memory_clock_mhz > 0 && device.memory_bus_bits > 0)
    return 2.0 * device.memory_clock_mhz * 1e6 * device.memory_bus_bits / 8 / 1e9;
  return 0;
}

PeakCheck check_against_peak(double achieved_tflops, const Peak& peak) {
  PeakCheck c;
  if (peak.tflops > 0) {
    c.efficiency = achieved_tflops / peak.tflops;
    c.above_peak = achieved_tflops > peak.tflops;
  }
  return c;
}

}  // namespace gpucal
