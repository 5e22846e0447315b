// GPU runtime initialisation: "no driver / no device" is no GPU (tests skip, auto picks the
// host); a driver that is present with a runtime that fails is an error (core/backend/gpu_init.h).
// With the CUDA backend built, the CUDA error codes' mapping is checked too.
#include <gtest/gtest.h>

#include "core/backend/gpu_init.h"
#include "core/backend/last_level_cache.h"
#if defined(GPUCAL_HAVE_CUDA)
#include "core/backend/gpu_runtime.h"
#endif

using namespace gpucal;

TEST(GpuInit, NoDriverOrNoDeviceIsNoGpu) {
  EXPECT_EQ(classify_gpu_init(GpuInitStatus::ok, true, "cuda", "").verdict, GpuInitVerdict::devices);
  EXPECT_EQ(classify_gpu_init(GpuInitStatus::no_device, true, "cuda", "no CUDA-capable device").verdict,
            GpuInitVerdict::no_gpu);
  EXPECT_EQ(classify_gpu_init(GpuInitStatus::no_device, false, "hip", "no device").verdict, GpuInitVerdict::no_gpu);
  EXPECT_EQ(classify_gpu_init(GpuInitStatus::stub_library, true, "cuda", "stub").verdict, GpuInitVerdict::no_gpu);
  // This build machine: no libcuda.so.1, the runtime says "insufficient driver".
  const GpuInitOutcome o = classify_gpu_init(GpuInitStatus::no_driver, false, "cuda",
                                             "CUDA driver version is insufficient for CUDA runtime version");
  EXPECT_EQ(o.verdict, GpuInitVerdict::no_gpu);
  EXPECT_NE(o.reason.find("no driver"), std::string::npos);
  EXPECT_EQ(classify_gpu_init(GpuInitStatus::other_error, false, "cuda", "initialization error").verdict,
            GpuInitVerdict::no_gpu);
}

TEST(GpuInit, DriverPresentAndRuntimeFailingIsAnErrorWithTheMessage) {
  const GpuInitOutcome old = classify_gpu_init(GpuInitStatus::no_driver, true, "cuda",
                                               "CUDA driver version is insufficient for CUDA runtime version");
  EXPECT_EQ(old.verdict, GpuInitVerdict::failed);
  EXPECT_NE(old.reason.find("insufficient"), std::string::npos);
  EXPECT_NE(old.reason.find("older than the runtime"), std::string::npos);
  const GpuInitOutcome broken = classify_gpu_init(GpuInitStatus::other_error, true, "hip", "hipErrorInitializationError");
  EXPECT_EQ(broken.verdict, GpuInitVerdict::failed);
  EXPECT_NE(broken.reason.find("hipErrorInitializationError"), std::string::npos);
}

#if defined(GPUCAL_HAVE_CUDA)
TEST(GpuInit, CudaErrorCodesMapToStatuses) {
  EXPECT_EQ(gpu_init_status(cudaSuccess), GpuInitStatus::ok);
  EXPECT_EQ(gpu_init_status(cudaErrorNoDevice), GpuInitStatus::no_device);
  EXPECT_EQ(gpu_init_status(cudaErrorInsufficientDriver), GpuInitStatus::no_driver);
  EXPECT_EQ(gpu_init_status(cudaErrorStubLibrary), GpuInitStatus::stub_library);
  EXPECT_EQ(gpu_init_status(cudaErrorInitializationError), GpuInitStatus::other_error);
  EXPECT_EQ(gpu_init_status(cudaErrorSystemDriverMismatch), GpuInitStatus::other_error);
  EXPECT_EQ(gpu_init_status(cudaErrorDevicesUnavailable), GpuInitStatus::other_error);
}
#endif

TEST(Llc, InfinityCacheAboveTheReportedL2) {
  // MI300X: HIP reports 4 MB of L2 (one XCD); the 256 MiB Infinity Cache is the last level.
  const LastLevelCache mi300x = last_level_cache("gfx942", 4u << 20);
  EXPECT_EQ(mi300x.bytes, size_t{256} << 20);
  EXPECT_NE(mi300x.source.find("gfx942"), std::string::npos);
  EXPECT_EQ(last_level_cache("gfx950", 4u << 20).bytes, size_t{256} << 20);
  EXPECT_EQ(last_level_cache("gfx1100", 6u << 20).bytes, size_t{96} << 20);
}

TEST(Llc, ReportedL2WhereItIsTheLastLevel) {
  const LastLevelCache h100 = last_level_cache("sm_90", 50u << 20);
  EXPECT_EQ(h100.bytes, size_t{50} << 20);
  EXPECT_EQ(h100.source, "reported L2");
  EXPECT_EQ(last_level_cache("gfx90a", 8u << 20).bytes, size_t{8} << 20);  // MI200: no Infinity Cache
  // Never below what the runtime reports.
  EXPECT_EQ(last_level_cache("gfx942", 512u << 20).bytes, size_t{512} << 20);
}
