// The GPU reference check: a simple tiled GEMM (fp32 accumulate; fp64 for fp64 and int8
// inputs, where fp32 would not be exact enough) that recomputes EVERY element of D from the
// same inputs (fp8: dequantized, times the same scales) and compares in the same kernel,
// reducing the largest normwise error and the count of elements outside tolerance.
// Written once in gemm_reference.cuh; compiled for CUDA (gemm_reference.cu) and HIP
// (gemm_reference.hip) into gpucal::gemm::cuda / ::hip.
#pragma once

#include <cstdint>

namespace gpucal::gemm {

// The kernel checks 64x64 tiles of D: every tile, or (tile_step > 1) every row of tiles but
// only every tile_step-th column tile, shifted by one per row of tiles, so tile_step
// consecutive rows of tiles cover every column tile (gemm_formulas.h: reference_tile_step).
constexpr int64_t kReferenceTile = 64;

struct ReferenceArgs {
  int a_type = 0, b_type = 0, c_type = 0, d_type = 0;  // gpucal::DType codes (storage types)
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // elements between batch entries
  double alpha = 1, beta = 0;
  double ab_scale = 1;  // scale_a * scale_b (fp8), else 1
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;  // read when beta != 0
  const void* d = nullptr;  // the library's output (same layout as C)
  double tolerance = 0;
  int64_t tile_step = 1;
  void* stream = nullptr;
};

struct ReferenceResult {
  double max_rel_err = 0;  // |d - ref| / (sum |alpha ab_scale a b| + |beta c|); inf for NaN
  uint64_t bad = 0;        // elements above tolerance (NaN included)
  uint64_t checked = 0;    // elements of the checked tiles (m * n * batch when tile_step is 1)
};

// Throws std::runtime_error for an input pairing the kernel is not instantiated for.
#if defined(GPUCAL_HAVE_CUDA)
namespace cuda {
ReferenceResult reference_check(const ReferenceArgs& args);
}
#endif
#if defined(GPUCAL_HAVE_HIP)
namespace hip {
ReferenceResult reference_check(const ReferenceArgs& args);
}
#endif

}  // namespace gpucal::gemm
