// What the p2p ops need from a device beyond core/backend/backend.h: pattern fills and checks
// done where the bytes live, the SM-driven copy kernel, and peer devices (buffers, the
// copy-engine peer copy, the link between two devices). Host implementation in
// device_ops_host.cpp; CUDA and HIP share device_ops_gpu.cuh.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/backend/backend.h"

namespace gpucal::p2p {

// A buffer on a device other than the backend's own (freed on that device).
struct PeerBuffer {
  std::shared_ptr<void> ptr;
  int device = -1;
  void* get() const { return ptr.get(); }
};

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  // Byte i becomes pattern_byte(seed, i), or its complement when `poison`. Asynchronous
  // on the backend's stream for device memory. `device` >= 0 names a peer device holding
  // the bytes (filled through the host).
  virtual void fill_pattern(void* dst, size_t bytes, MemKind kind, uint64_t seed, bool poison, int device = -1) = 0;
  // Bytes that differ from pattern_byte(seed, i); waits for the stream. `device` >= 0 names
  // a peer device holding the bytes.
  virtual int64_t count_wrong(const void* p, size_t bytes, MemKind kind, uint64_t seed, int device = -1) = 0;
  // Overwrites one byte (test-only fault injection).
  virtual void corrupt_byte(void* p, MemKind kind) = 0;
  // The SM-driven copy: a vectorized grid-stride kernel on the backend's stream. Throws
  // SkipPoint where there are no SMs (host).
  virtual void sm_copy(void* dst, const void* src, size_t bytes) = 0;

  // Devices this process may use as peers of its own (all others the runtime lists).
  virtual int device_count() const { return 1; }
  // Allocates on `device` and enables peer access from the backend's device wherever the
  // pair has it (copy-engine copies then go device to device; without it they are staged
  // through host memory). Throws SkipPoint when `require_access` (the SM copy kernel
  // dereferences the peer's memory) and the pair has no peer access.
  virtual PeerBuffer allocate_peer(int device, size_t bytes, bool require_access) = 0;
  // Copy-engine copy from the backend's device to a peer's buffer.
  virtual void peer_copy(void* dst, int dst_device, const void* src, size_t bytes) = 0;
  // Link class between the backend's device and `device` (same-device, nvlink, xgmi, pcie,
  // staged: no peer access, unknown), and between the device and host memory.
  virtual std::string device_link_class(int device) const = 0;
  virtual std::string host_link_class() const = 0;
  // Link class to the device with this PCI bus id on the same node ("intra-node" when this
  // process cannot see it).
  virtual std::string link_class_to(const std::string& pci_bus_id) const = 0;
};

std::unique_ptr<DeviceOps> make_device_ops(Backend& backend);

// The host loops behind DeviceOps, for memory the CPU reads and writes directly.
void host_fill_pattern(void* dst, size_t bytes, uint64_t seed, bool poison);
int64_t host_count_wrong(const void* p, size_t bytes, uint64_t seed);

}  // namespace gpucal::p2p
