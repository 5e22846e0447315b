// The GPU backend, written once for CUDA and HIP through core/backend/gpu_runtime.h and
// compiled by backend_cuda.cu and backend_hip.hip into namespaces gpucal::cuda / ::hip.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

#include "core/backend/backend.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"
#include "core/backend/gpu_runtime.h"
#include "core/backend/last_level_cache.h"

namespace gpucal::GPUCAL_GPU_NS {

namespace {

__global__ void fill_random_kernel(void* dst, uint64_t count, int type_code, uint64_t seed, double lo, double span) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    elem::store_from_double(dst, i, type_code, lo + span * elem::uniform01(seed, i));
}

__global__ void fill_constant_kernel(void* dst, uint64_t count, int type_code, double value) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    elem::store_from_double(dst, i, type_code, value);
}

std::string version_string(int v) {
  std::ostringstream s;
  s << v / 1000 << "." << (v % 1000) / 10;
  return s.str();
}

class GpuTimer : public DeviceTimer {
 public:
  explicit GpuTimer(gpuStream_t s) : stream_(s) {
    GPU_CHECK(gpuEventCreate(&start_));
    GPU_CHECK(gpuEventCreate(&stop_));
  }
  ~GpuTimer() override {
    (void)gpuEventDestroy(start_);
    (void)gpuEventDestroy(stop_);
  }
  void start() override { GPU_CHECK(gpuEventRecord(start_, stream_)); }
  void stop() override { GPU_CHECK(gpuEventRecord(stop_, stream_)); }
  double elapsed_seconds() override {
    GPU_CHECK(gpuEventSynchronize(stop_));
    float ms = 0;
    GPU_CHECK(gpuEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  gpuStream_t stream_;
  gpuEvent_t start_{}, stop_{};
};

class GpuBackend : public Backend {
 public:
  explicit GpuBackend(int device) {
    GPU_CHECK(gpuSetDevice(device));
    gpuDeviceProp_t p{};
    GPU_CHECK(gpuGetDeviceProperties(&p, device));
    info_.backend = GPUCAL_GPU_VENDOR;
    info_.index = device;
    info_.name = p.name;
#if defined(GPUCAL_GPU_HIP)
    info_.arch = p.gcnArchName;
    info_.arch = info_.arch.substr(0, info_.arch.find(':'));
#else
    info_.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#endif
    info_.compute_units = p.multiProcessorCount;
    int clock_khz = 0, mem_khz = 0, bus_bits = 0;
    (void)gpuDeviceGetAttribute(&clock_khz, GPUCAL_ATTR(ClockRate), device);
    (void)gpuDeviceGetAttribute(&mem_khz, GPUCAL_ATTR(MemoryClockRate), device);
    (void)gpuDeviceGetAttribute(&bus_bits, GPUCAL_ATTR_MEM_BUS_WIDTH, device);
    info_.clock_mhz = clock_khz / 1000.0;
    info_.clock_source = "runtime attribute ClockRate (maximum)";
    info_.memory_clock_mhz = mem_khz / 1000.0;
    info_.memory_bus_bits = bus_bits;
    info_.memory_bytes = p.totalGlobalMem;
    info_.l2_bytes = static_cast<size_t>(p.l2CacheSize);
    const LastLevelCache llc = last_level_cache(info_.arch, info_.l2_bytes ? info_.l2_bytes : (64u << 20));
    info_.llc_bytes = llc.bytes;
    info_.llc_source = info_.l2_bytes ? llc.source : llc.source + " (runtime reported no L2: 64 MiB assumed)";
#if !defined(GPUCAL_GPU_HIP)  // HIP 5.2's device properties carry no UUID
    std::ostringstream uuid;
    uuid << std::hex;
    for (int i = 0; i < 16; ++i) {
      const unsigned byte = static_cast<unsigned char>(p.uuid.bytes[i]);
      uuid << (byte >> 4) << (byte & 0xf);
    }
    info_.uuid = uuid.str();
#endif
    char bus[32] = {0};
    if (gpuDeviceGetPCIBusId(bus, sizeof bus, device) == gpuSuccess) info_.pci_bus_id = bus;
    int drv = 0, rt = 0;
    (void)gpuDriverGetVersion(&drv);
    (void)gpuRuntimeGetVersion(&rt);
    info_.driver_version = version_string(drv);
    info_.runtime_version = version_string(rt);
    GPU_CHECK(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking));
  }
  ~GpuBackend() override {
    flush_.reset();
    (void)gpuStreamSynchronize(stream_);
    (void)gpuStreamDestroy(stream_);
  }
  const DeviceInfo& info() const override { return info_; }
  void release(void* ptr, MemKind kind) override {
    if (kind == MemKind::device)
      (void)gpuFree(ptr);
    else if (kind == MemKind::host_pinned)
      (void)gpuFreeHost(ptr);
    else
      std::free(ptr);
  }
  void* stream() override { return stream_; }
  void synchronize() override { GPU_CHECK(gpuStreamSynchronize(stream_)); }
  std::unique_ptr<DeviceTimer> make_timer() override { return std::make_unique<GpuTimer>(stream_); }
  void copy(void* dst, const void* src, size_t bytes) override {
    GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, stream_));
  }
  void fill_random(void* dst, size_t count, DType type, uint64_t seed, double lo, double hi) override {
    if (count == 0) return;
    fill_random_kernel<<<grid(count), 256, 0, stream_>>>(dst, count, static_cast<int>(type), seed, lo, hi - lo);
    GPU_CHECK_LAUNCH();
  }
  void fill_constant(void* dst, size_t count, DType type, double value) override {
    if (count == 0) return;
    fill_constant_kernel<<<grid(count), 256, 0, stream_>>>(dst, count, static_cast<int>(type), value);
    GPU_CHECK_LAUNCH();
  }
  void flush_cache() override {
    const size_t bytes = 2 * info_.llc_bytes;
    if (!flush_.get()) flush_ = allocate(bytes);
    GPU_CHECK(gpuMemsetAsync(flush_.get(), flush_value_++ & 0xff, bytes, stream_));
  }

 protected:
  void* raw_allocate(size_t bytes, MemKind kind) override {
    void* p = nullptr;
    if (kind == MemKind::device) {
      gpuError_t err = gpuMalloc(&p, bytes);
      if (err != gpuSuccess) {
        (void)gpuGetLastError();  // clear the sticky-free error state
        std::ostringstream msg;
        msg << "device allocation of " << bytes << " bytes failed (" << gpuGetErrorString(err) << ")";
        throw SkipPoint(msg.str());
      }
    } else if (kind == MemKind::host_pinned) {
      GPU_CHECK(gpuMallocHost(&p, bytes));
    } else {
      p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
      if (!p) throw std::bad_alloc();
    }
    return p;
  }

 private:
  static unsigned grid(size_t count) {
    size_t blocks = (count + 255) / 256;
    return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
  }
  DeviceInfo info_;
  gpuStream_t stream_{};
  Buffer flush_;
  int flush_value_ = 1;
};

}  // namespace

// Whether the driver's user-space part is on this machine: CUDA's libcuda.so.1 (loaded
// already by the runtime, or loadable), HIP's amdgpu kernel driver (/dev/kfd).
bool driver_present() {
#if defined(GPUCAL_GPU_HIP)
  return access("/dev/kfd", F_OK) == 0;
#else
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return false;
  dlclose(lib);
  return true;
#endif
}

int device_count() {
  int n = 0;
  const gpuError_t err = gpuGetDeviceCount(&n);
  if (err == gpuSuccess) return n;
  (void)gpuGetLastError();
  const GpuInitOutcome o = classify_gpu_init(gpu_init_status(err), driver_present(), GPUCAL_GPU_VENDOR,
                                             gpuGetErrorString(err));
  if (o.verdict == GpuInitVerdict::failed) throw std::runtime_error(o.reason);
  return 0;  // no driver, no device, or a stub driver library: no GPU here
}

std::unique_ptr<Backend> make_gpu_backend(int device) { return std::make_unique<GpuBackend>(device); }

}  // namespace gpucal::GPUCAL_GPU_NS
