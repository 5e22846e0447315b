#include "harness/peaks.h"

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

}  // namespace

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
