// A small synthetic results folder with known ground truth, for the calibration tests and the
// plot test: gemm/attention/collectives/p2p/memory CSVs in the bench schema, per-sample files and
// JSON sidecars. Times follow the models below with seeded multiplicative noise.
#pragma once
#include <string>

namespace gpucal::calibration::testing {

struct SyntheticOptions {
  double time_scale = 1.0;     // every time multiplied (1.2: a 20% slower run)
  std::string slow_point;      // when set, only this point is multiplied by slow_factor
  double slow_factor = 1.0;
  unsigned seed = 1;
  double noise = 0.01;         // relative stdev of a sample
  int samples = 20;
  bool write_samples = true;
  std::string device = "Synthetic GPU";
  std::string driver_version = "555.42";
};

// Ground truth of the synthetic communication (bus GB/s, µs).
constexpr double kIntraAlphaUs = 10.0, kIntraBetaGbps = 100.0;   // allreduce, 1 node
constexpr double kInterAlphaUs = 25.0, kInterBetaGbps = 20.0;    // allreduce, 2 nodes
constexpr double kP2pIntraAlphaUs = 3.0, kP2pIntraBetaGbps = 150.0;
constexpr double kCopyPeakGbps = 2000.0;                          // d2d copy saturation
constexpr double kBf16PeakTflops = 900.0;
// bench_memory: STREAM plateaus per level (L1d 64 KiB, L2 4 MiB aggregate) and beyond.
constexpr double kL1Gbps = 4000.0, kL2Gbps = 1500.0, kMemoryGbps = 300.0;
constexpr double kL1Bytes = 64.0 * 1024, kL2Bytes = 4.0 * 1024 * 1024;
constexpr double kVectorPeakTflops = 60.0, kVectorTflops = 45.0;

void write_synthetic_results(const std::string& dir, const SyntheticOptions& options = {});

// A GEMM point name present in the synthetic gemm.csv (for planting slowdowns).
std::string synthetic_gemm_point();

}  // namespace gpucal::calibration::testing
