// Theoretical peaks: a table of published dense figures for known devices, and a computed
// fallback (compute units x clock x flop per clock per unit) for the rest. Every compute
// row divides by these, and a result above its peak is rejected, not reported.
#pragma once

#include <optional>
#include <string>

#include "core/backend/backend.h"
#include "core/backend/dtype.h"

namespace gpucal {

struct Peak {
  double tflops = 0;  // dense, no sparsity; 0 when unknown for this dtype
  std::string source;  // "table:H100 SXM" or "computed:132 SM x 1980 MHz x 4096 flop/clk"
};

// `math` is the dtype the multiply runs in (tf32 for fp32 inputs on tensor cores, int8, ...).
Peak peak_tflops(const DeviceInfo& device, DType math);
// Vector (non-tensor, non-matrix) FMA throughput for elementwise work in `t` (fp64, fp32,
// fp16, bf16): what an elementwise kernel can reach at most (bench_memory's fma_chain).
// Published figures where the vendor gives them, else compute units x clock x vector flop
// per clock per unit; fp16/bf16 on the host are 0 (no vector FMA in those types).
Peak vector_peak_tflops(const DeviceInfo& device, DType t);
// Memory bandwidth, GB/s (1e9 B/s); 0 when unknown.
double peak_memory_gbps(const DeviceInfo& device);

// Outcome of checking an achieved figure against its peak.
struct PeakCheck {
  double efficiency = 0;  // achieved / peak; 0 when the peak is unknown
  bool above_peak = false;
};
PeakCheck check_against_peak(double achieved_tflops, const Peak& peak);

// A figure read against a peak recorded apart from it (an expectations file's, a calibration
// table's) is beyond that peak, and so no physical figure, when more than 2% above it: a device
// may run its clocks somewhat above those the peak was taken at.
inline bool beyond_recorded_peak(double value, double peak) { return peak > 0 && value > peak * 1.02; }

}  // namespace gpucal
