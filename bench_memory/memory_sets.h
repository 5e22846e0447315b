// Named point sets of bench_memory (--set): the shapes a transformer training step uses.
// The data lives in memory_sets.cpp; tests/gpu/torch_memory.py mirrors it (checked by ctest).
#pragma once

#include <string>
#include <vector>

#include "core/formulas/kernel_table.h"

namespace gpucal::memory {

struct SetPoint {
  Kernel kernel;
  Dims dims;  // STREAM: n = bytes per array / element size is filled per dtype by the caller
  int64_t stream_bytes = 0;  // STREAM kernels: bytes per array
};

// SwiGLU's FFN width for hidden h: 8h/3 rounded up to a multiple of 256 (11008 for 4096),
// as bench_gemm's llm set.
int64_t swiglu_ffn(int64_t hidden);
// "llm" (training-step shapes) or "quick" (one shape per op, a few STREAM sizes); throws
// UsageError for another name.
std::vector<SetPoint> named_set(const std::string& name);
const std::vector<std::string>& set_names();

}  // namespace gpucal::memory
