// DeviceOps for GPUs, written once for CUDA and HIP through core/backend/gpu_runtime.h and
// compiled by device_ops_cuda.cu and device_ops_hip.hip into gpucal::p2p::cuda / ::hip.
// Holds the SM-driven copy kernel that sits beside the copy-engine path.
#pragma once

#include <memory>
#include <set>
#include <vector>

#include "bench_p2p/byte_pattern.h"
#include "bench_p2p/device_ops.h"
#include "bench_p2p/p2p_formulas.h"
#include "core/errors.h"
#include "core/backend/gpu_runtime.h"

namespace gpucal::p2p::GPUCAL_GPU_NS {

namespace {

__global__ void fill_pattern_kernel(uint8_t* dst, uint64_t bytes, uint64_t seed, uint64_t flip) {
  const uint64_t tid = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint64_t words = bytes / 8;  // allocations are at least 8-byte aligned
  for (uint64_t w = tid; w < words; w += stride) reinterpret_cast<uint64_t*>(dst)[w] = pattern_word(seed, w) ^ flip;
  for (uint64_t i = 8 * words + tid; i < bytes; i += stride) dst[i] = static_cast<uint8_t>(pattern_byte(seed, i) ^ flip);
}

__device__ int nonzero_bytes(uint64_t x) {
  int n = 0;
  for (; x; x >>= 8) n += (x & 0xff) ? 1 : 0;
  return n;
}

__global__ void count_wrong_kernel(const uint8_t* p, uint64_t bytes, uint64_t seed, unsigned long long* wrong) {
  const uint64_t tid = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint64_t words = bytes / 8;
  unsigned long long local = 0;
  for (uint64_t w = tid; w < words; w += stride)
    local += nonzero_bytes(reinterpret_cast<const uint64_t*>(p)[w] ^ pattern_word(seed, w));
  for (uint64_t i = 8 * words + tid; i < bytes; i += stride) local += p[i] != pattern_byte(seed, i) ? 1 : 0;
  if (local) atomicAdd(wrong, local);
}

// 16-byte loads and stores when both ends are 16-byte aligned, bytes otherwise and for
// the tail. Grid-stride, so any grid size covers any length.
__global__ void sm_copy_kernel(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  const uint64_t tid = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  uint64_t head = 0;
  if (((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & 15) == 0) {
    const uint64_t vecs = bytes / 16;
    for (uint64_t v = tid; v < vecs; v += stride) reinterpret_cast<uint4*>(dst)[v] = reinterpret_cast<const uint4*>(src)[v];
    head = 16 * vecs;
  }
  for (uint64_t i = head + tid; i < bytes; i += stride) dst[i] = src[i];
}

class GpuDeviceOps : public DeviceOps {
 public:
  explicit GpuDeviceOps(Backend& backend)
      : backend_(backend), device_(backend.info().index), stream_(static_cast<gpuStream_t>(backend.stream())) {
    GPU_CHECK(gpuMalloc(&counter_, sizeof(unsigned long long)));
    const int sms = backend.info().compute_units;
    max_blocks_ = static_cast<unsigned>(sms > 0 ? sms * 8 : 1024);
  }
  ~GpuDeviceOps() override { (void)gpuFree(counter_); }

  void fill_pattern(void* dst, size_t bytes, MemKind kind, uint64_t seed, bool poison, int device) override {
    if (kind != MemKind::device) {
      backend_.synchronize();
      host_fill_pattern(dst, bytes, seed, poison);
      return;
    }
    if (device >= 0 && device != device_) {  // a peer's buffer, perhaps without peer access
      std::vector<uint8_t> host(bytes);
      host_fill_pattern(host.data(), bytes, seed, poison);
      backend_.synchronize();
      GPU_CHECK(gpuMemcpy(dst, host.data(), bytes, gpuMemcpyDefault));
      return;
    }
    fill_pattern_kernel<<<grid(bytes / 8 + 1), 256, 0, stream_>>>(static_cast<uint8_t*>(dst), bytes, seed, poison ? ~0ull : 0ull);
    GPU_CHECK_LAUNCH();
  }
  int64_t count_wrong(const void* p, size_t bytes, MemKind kind, uint64_t seed, int device) override {
    backend_.synchronize();
    if (kind != MemKind::device) return host_count_wrong(p, bytes, seed);
    if (device >= 0 && device != device_) {  // a peer's buffer: read it back through the host
      std::vector<uint8_t> host(bytes);
      GPU_CHECK(gpuMemcpy(host.data(), p, bytes, gpuMemcpyDefault));
      return host_count_wrong(host.data(), bytes, seed);
    }
    GPU_CHECK(gpuMemsetAsync(counter_, 0, sizeof(unsigned long long), stream_));
    count_wrong_kernel<<<grid(bytes / 8 + 1), 256, 0, stream_>>>(static_cast<const uint8_t*>(p), bytes, seed, counter_);
    GPU_CHECK_LAUNCH();
    unsigned long long wrong = 0;
    GPU_CHECK(gpuMemcpyAsync(&wrong, counter_, sizeof wrong, gpuMemcpyDeviceToHost, stream_));
    backend_.synchronize();
    return static_cast<int64_t>(wrong);
  }
  void corrupt_byte(void* p, MemKind kind) override {
    backend_.synchronize();
    uint8_t b = 0;
    GPU_CHECK(gpuMemcpy(&b, p, 1, gpuMemcpyDefault));
    b ^= 0x5a;
    GPU_CHECK(gpuMemcpy(p, &b, 1, gpuMemcpyDefault));
    (void)kind;
  }
  void sm_copy(void* dst, const void* src, size_t bytes) override {
    sm_copy_kernel<<<grid(bytes / 16 + 1), 256, 0, stream_>>>(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes);
    GPU_CHECK_LAUNCH();
  }

  int device_count() const override {
    int n = 0;
    return gpuGetDeviceCount(&n) == gpuSuccess ? n : 1;
  }
  PeerBuffer allocate_peer(int device, size_t bytes, bool require_access) override {
    if (!enabled_.count(device)) {
      // For both engines: cudaMemcpyPeerAsync without peer access is staged through the host.
      if (peer_access(device)) {
        const gpuError_t err = gpuDeviceEnablePeerAccess(device, 0);
        if (err == gpuErrorPeerAccessAlreadyEnabled)
          (void)gpuGetLastError();  // enabled earlier in this process: fine
        else
          GPU_CHECK(err);
        enabled_.insert(device);
      } else if (require_access) {
        throw SkipPoint("device " + std::to_string(device_) + " cannot access device " + std::to_string(device) +
                        " (no peer access)");
      }
    }
    void* p = nullptr;
    GPU_CHECK(gpuSetDevice(device));
    const gpuError_t err = gpuMalloc(&p, bytes);
    GPU_CHECK(gpuSetDevice(device_));
    if (err != gpuSuccess) {
      (void)gpuGetLastError();
      throw SkipPoint("allocation of " + std::to_string(bytes) + " bytes on device " + std::to_string(device) + " failed");
    }
    PeerBuffer b;
    b.device = device;
    const int own = device_;
    b.ptr = std::shared_ptr<void>(p, [device, own](void* q) {
      (void)gpuSetDevice(device);
      (void)gpuFree(q);
      (void)gpuSetDevice(own);
    });
    return b;
  }
  void peer_copy(void* dst, int dst_device, const void* src, size_t bytes) override {
    GPU_CHECK(gpuMemcpyPeerAsync(dst, dst_device, src, device_, bytes, stream_));
  }
  std::string device_link_class(int device) const override {
    if (device == device_) return "same-device";
#if defined(GPUCAL_GPU_HIP)
    uint32_t type = 0, hops = 0;
    if (hipExtGetLinkTypeAndHopCount(device_, device, &type, &hops) != hipSuccess) return "unknown";
    // HSA_AMD_LINK_INFO_TYPE_{XGMI,PCIE}
    return peer_link_class(peer_access(device), type == 4 ? "xgmi" : type == 2 ? "pcie" : "unknown");
#else
    // NVML-free: peers with native atomics are NVLink-connected; peer access without them
    // is PCIe; without peer access copies are staged through host memory.
    int atomics = 0;
    if (cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, device_, device) != cudaSuccess) {
      (void)gpuGetLastError();
      return "unknown";
    }
    return peer_link_class(peer_access(device), atomics ? "nvlink" : "pcie");
#endif
  }
  std::string link_class_to(const std::string& pci_bus_id) const override {
    for (int d = 0; d < device_count(); ++d) {
      char bus[32] = {0};
      if (gpuDeviceGetPCIBusId(bus, sizeof bus, d) == gpuSuccess && pci_bus_id == bus) return device_link_class(d);
    }
    return "intra-node";
  }
  std::string host_link_class() const override {
#if defined(GPUCAL_GPU_HIP)
    return "pcie";
#else
    int native = 0;  // host native atomics: the NVLink-C2C of Grace Hopper, not PCIe
    if (cudaDeviceGetAttribute(&native, cudaDevAttrHostNativeAtomicSupported, device_) != cudaSuccess) return "unknown";
    return native ? "nvlink-c2c" : "pcie";
#endif
  }

 private:
  bool peer_access(int device) const {
    int can = 0;
    if (gpuDeviceCanAccessPeer(&can, device_, device) != gpuSuccess) {
      (void)gpuGetLastError();
      return false;
    }
    return can != 0;
  }
  unsigned grid(size_t items) const {
    const size_t blocks = (items + 255) / 256;
    return static_cast<unsigned>(blocks < max_blocks_ ? blocks : max_blocks_);
  }
  Backend& backend_;
  int device_;
  gpuStream_t stream_;
  unsigned long long* counter_ = nullptr;
  unsigned max_blocks_ = 1024;
  std::set<int> enabled_;
};

}  // namespace

std::unique_ptr<DeviceOps> make_gpu_device_ops(Backend& backend) { return std::make_unique<GpuDeviceOps>(backend); }

}  // namespace gpucal::p2p::GPUCAL_GPU_NS
