// The one portability header between CUDA and HIP: runtime names, error checking and
// the few device intrinsics our kernels use. A translation unit defines GPUCAL_GPU_HIP to
// get HIP; otherwise it gets CUDA. Nothing vendor-specific belongs anywhere else in
// shared kernel sources.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#if defined(GPUCAL_GPU_HIP)
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#define GPUCAL_GPU_NS hip
#define GPUCAL_GPU_VENDOR "hip"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
using gpuDeviceProp_t = hipDeviceProp_t;
using gpu_half = __half;
using gpu_bf16 = hip_bfloat16;
#define gpuSuccess hipSuccess
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuGetDevice hipGetDevice
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDeviceGetPCIBusId hipDeviceGetPCIBusId
#define gpuDriverGetVersion hipDriverGetVersion
#define gpuRuntimeGetVersion hipRuntimeGetVersion
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocHost(p, n) hipHostMalloc(p, n, hipHostMallocDefault)
#define gpuFreeHost hipHostFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyPeerAsync hipMemcpyPeerAsync
#define gpuMemcpyDefault hipMemcpyDefault
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemGetInfo hipMemGetInfo
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamQuery hipStreamQuery
#define gpuErrorNotReady hipErrorNotReady
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuLaunchKernel hipLaunchKernel
#define gpuFuncSetAttribute(func, attr, value) hipFuncSetAttribute(reinterpret_cast<const void*>(func), attr, value)
#define gpuFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#define GPUCAL_ATTR(name) hipDeviceAttribute##name
#define GPUCAL_ATTR_MEM_BUS_WIDTH hipDeviceAttributeMemoryBusWidth
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define GPUCAL_GPU_NS cuda
#define GPUCAL_GPU_VENDOR "cuda"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
using gpuDeviceProp_t = cudaDeviceProp;
using gpu_half = __half;
using gpu_bf16 = __nv_bfloat16;
#define gpuSuccess cudaSuccess
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuGetDevice cudaGetDevice
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDeviceGetPCIBusId cudaDeviceGetPCIBusId
#define gpuDriverGetVersion cudaDriverGetVersion
#define gpuRuntimeGetVersion cudaRuntimeGetVersion
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocHost(p, n) cudaMallocHost(p, n)
#define gpuFreeHost cudaFreeHost
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyPeerAsync cudaMemcpyPeerAsync
#define gpuMemcpyDefault cudaMemcpyDefault
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemGetInfo cudaMemGetInfo
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamQuery cudaStreamQuery
#define gpuErrorNotReady cudaErrorNotReady
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuLaunchKernel cudaLaunchKernel
#define gpuFuncSetAttribute(func, attr, value) cudaFuncSetAttribute(reinterpret_cast<const void*>(func), attr, value)
#define gpuFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define GPUCAL_ATTR(name) cudaDevAttr##name
#define GPUCAL_ATTR_MEM_BUS_WIDTH cudaDevAttrGlobalMemoryBusWidth
#endif

#include "core/backend/gpu_init.h"

namespace gpucal {

// The vendor's answer to "how many devices?" in vendor-neutral terms (core/backend/gpu_init.h
// decides what it means).
inline GpuInitStatus gpu_init_status(gpuError_t err) {
#if defined(GPUCAL_GPU_HIP)
  switch (err) {
    case hipSuccess: return GpuInitStatus::ok;
    case hipErrorNoDevice: return GpuInitStatus::no_device;
    case hipErrorInsufficientDriver: return GpuInitStatus::no_driver;
    default: return GpuInitStatus::other_error;
  }
#else
  switch (err) {
    case cudaSuccess: return GpuInitStatus::ok;
    case cudaErrorNoDevice: return GpuInitStatus::no_device;
    case cudaErrorInsufficientDriver: return GpuInitStatus::no_driver;
    case cudaErrorStubLibrary: return GpuInitStatus::stub_library;
    default: return GpuInitStatus::other_error;
  }
#endif
}

// Throws with file, line and the failing call's text; the benchmark boundary turns it into
// a recorded error for that point.
[[noreturn]] inline void throw_gpu_error(gpuError_t err, const char* call, const char* file, int line) {
  std::ostringstream msg;
  msg << GPUCAL_GPU_VENDOR << " error '" << gpuGetErrorString(err) << "' in " << call << " at " << file << ":" << line;
  throw std::runtime_error(msg.str());
}

}  // namespace gpucal

#define GPU_CHECK(call)                                                          \
  do {                                                                           \
    gpuError_t gpucal_err_ = (call);                                             \
    if (gpucal_err_ != gpuSuccess) ::gpucal::throw_gpu_error(gpucal_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define GPU_CHECK_LAUNCH() GPU_CHECK(gpuGetLastError())
