// libFuzzer target: a bench_gemm --shapes file (bench_gemm/gemm_shapes_file.h). Any text is
// shapes whose every field is valid, or a UsageError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "bench_gemm/gemm_shapes_file.h"
#include "core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto shapes = gpucal::gemm::parse_shapes_text(text, "fuzz.csv", gpucal::DType::fp32, "NN");
    if (shapes.empty()) std::abort();
    for (const auto& s : shapes)
      if (s.m < 1 || s.n < 1 || s.k < 1 || s.batch < 1 || s.layout.size() != 2) std::abort();
  } catch (const gpucal::UsageError&) {
  }
  return 0;
}
