// gpucal's bench_memory kernels for CUDA and HIP: the API of memory_gpu.h over the kernel
// families (gpu_*.cuh). Included by exactly one translation unit per vendor
// (memory_kernels_cuda.cu, memory_kernels_hip.hip).
#pragma once

#include "bench_memory/gpu_common.cuh"
#include "bench_memory/gpu_cross_entropy.cuh"
#include "bench_memory/gpu_elementwise.cuh"
#include "bench_memory/gpu_fma_chain.cuh"
#include "bench_memory/gpu_norm.cuh"
#include "bench_memory/gpu_softmax.cuh"
#include "bench_memory/gpu_stream.cuh"
#include "bench_memory/memory_gpu.h"

namespace gpucal::memory::GPUCAL_GPU_NS {

void gpu_check_supported(Kernel k, DType t) {
  (void)k;
  if (t != DType::fp32 && t != DType::bf16 && t != DType::fp16)
    throw std::invalid_argument("gpucal memory kernels store fp32, bf16 or fp16, not " + to_string(t));
}

size_t gpu_workspace_bytes(const LaunchArgs& a, int sms) { return detail::norm_workspace_bytes(a, sms); }

void gpu_launch(const LaunchArgs& a, int sms) {
  if (kernel_desc(a.kernel).family == Family::stream) return detail::launch_stream(a, sms);
  switch (a.kernel) {
    case Kernel::fma_chain: return detail::launch_fma_chain(a, sms);
    case Kernel::layernorm_fwd: case Kernel::layernorm_bwd: case Kernel::rmsnorm_fwd: case Kernel::rmsnorm_bwd:
      return detail::launch_norm(a, sms);
    case Kernel::softmax_fwd: case Kernel::softmax_bwd: return detail::launch_softmax(a, sms);
    case Kernel::cross_entropy_fwd: case Kernel::cross_entropy_bwd: return detail::launch_cross_entropy(a, sms);
    case Kernel::gelu_fwd: case Kernel::gelu_bwd: case Kernel::swiglu_fwd: case Kernel::swiglu_bwd:
    case Kernel::residual_add: case Kernel::dropout_residual_add: case Kernel::adamw_step:
      return detail::launch_elementwise(a, sms);
    default: break;
  }
  throw std::logic_error("gpu_launch: unknown kernel");
}

}  // namespace gpucal::memory::GPUCAL_GPU_NS
