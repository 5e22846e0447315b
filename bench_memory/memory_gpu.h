// Host API of gpucal's own bench_memory kernels, written once in memory_kernels_gpu.cuh and
// compiled for CUDA (memory_kernels_cuda.cu) and HIP (memory_kernels_hip.hip). Both builds
// may be linked into one binary, so each lives in its vendor namespace; no vendor types here.
// Tensors are device pointers in LaunchArgs order; calls are asynchronous on a.stream;
// launch errors throw std::runtime_error (GPU_CHECK_LAUNCH).
#pragma once

#include <cstddef>

#include "bench_memory/launch_args.h"

#define GPUCAL_MEMORY_GPU_API                                                             \
  /* Throws std::invalid_argument with a one-line reason for a kernel/dtype not built. */ \
  void gpu_check_supported(Kernel k, DType t);                                            \
  /* Scratch bytes of one launch on a device with `sms` SMs/CUs (partial sums). */        \
  size_t gpu_workspace_bytes(const LaunchArgs& a, int sms);                               \
  void gpu_launch(const LaunchArgs& a, int sms);

namespace gpucal::memory::cuda {
GPUCAL_MEMORY_GPU_API
}  // namespace gpucal::memory::cuda

namespace gpucal::memory::hip {
GPUCAL_MEMORY_GPU_API
}  // namespace gpucal::memory::hip

#undef GPUCAL_MEMORY_GPU_API
