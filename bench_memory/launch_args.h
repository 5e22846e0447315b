// What an implementation of a bench_memory kernel receives for one launch: the kernel, the
// storage dtype, the point's dimensions, the tensors in kernel_table.h's order, scratch
// space, the scalars every implementation and the fp64 reference share, and the stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/formulas/kernel_table.h"

namespace gpucal::memory {

// The scalar arguments, in one place (the reference reads the same values).
struct Scalars {
  float q = 3.0f;  // STREAM's scale factor
  // fma_chain: x = x * m + c. m = -1 and c = 0 keep every step exact in any dtype, so the
  // result is (-1)^kFmaSteps x = -x (kFmaSteps is odd); the kernel only sees run-time values.
  float fma_m = -1.0f, fma_c = 0.0f;
  int fma_steps = kFmaSteps;
  float norm_eps = 1e-5f;  // LayerNorm and RMSNorm
  float dropout_p = 0.1f;
  uint32_t dropout_seed = 0;
  // AdamW (torch.optim.AdamW's update with weight decay applied to p first). lr is large
  // so that the update is visible in bf16 parameters: a kernel that skips it fails.
  float lr = 0.02f, beta1 = 0.9f, beta2 = 0.95f, adam_eps = 1e-8f, weight_decay = 0.1f;
  int adam_step = 10;  // bias corrections 1 - beta^step
};

struct LaunchArgs {
  Kernel kernel = Kernel::copy;
  DType dtype = DType::fp32;
  Dims dims;
  std::vector<void*> tensors;  // kernel_desc(kernel).tensors order
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  Scalars s;
  void* stream = nullptr;  // cudaStream_t / hipStream_t on GPUs
};

// Calls f(F32{}), f(BF16{}) or f(FP16{}) for the storage dtype: the host and the device
// implementations pass their own storage types.
template <typename F32, typename BF16, typename FP16, typename F>
void with_storage_types(DType t, F&& f) {
  switch (t) {
    case DType::fp32: f(F32{}); return;
    case DType::bf16: f(BF16{}); return;
    case DType::fp16: f(FP16{}); return;
    default: throw std::invalid_argument("bench_memory kernels store fp32, bf16 or fp16, not " + to_string(t));
  }
}

}  // namespace gpucal::memory
