// The device layer every bench shares: facts, buffers, a stream, device timers, copies
// and fills. Implementations: host (CPU memory, wall clock), cuda and hip (one source,
// core/backend/gpu_backend.cuh, compiled once per vendor). Chosen at run time by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/dtype.h"

namespace gpucal {

struct DeviceInfo {
  std::string backend;  // host | cuda | hip
  int index = 0;        // device ordinal within the process
  std::string name;
  std::string arch;  // "sm_90", "gfx90a", or the CPU's ISA level ("x86_64-avx2")
  int compute_units = 0;  // SMs, CUs, or CPU cores
  double clock_mhz = 0;   // peak compute clock
  std::string clock_source;  // where clock_mhz comes from (runtime attribute, cpufreq, measured)
  double memory_clock_mhz = 0;
  int memory_bus_bits = 0;
  size_t memory_bytes = 0;
  size_t l2_bytes = 0;  // the cache the runtime reports (L2 on GPUs, the largest sysfs cache on the host)
  size_t llc_bytes = 0;  // the last-level cache cold regimes evict: >= l2_bytes (core/backend/last_level_cache.h)
  std::string llc_source;  // where llc_bytes comes from
  std::string uuid;
  std::string pci_bus_id;
  std::string driver_version;
  std::string runtime_version;
};

enum class MemKind { device, host_pinned, host_pageable };

class Backend;

// Owning buffer; memory is released by the backend that made it.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend* owner, void* ptr, size_t bytes, MemKind kind) : owner_(owner), ptr_(ptr), bytes_(bytes), kind_(kind) {}
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }
  void reset();
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
  MemKind kind() const { return kind_; }

 private:
  Backend* owner_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  MemKind kind_ = MemKind::device;
};

// Brackets work on the backend's stream; elapsed time is measured where the work runs
// (device events on GPUs).
class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_seconds() = 0;  // waits for stop() to complete
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const DeviceInfo& info() const = 0;
  const std::string& name() const { return info().backend; }
  bool is_host() const { return info().backend == "host"; }

  // Throws SkipPoint when `bytes` exceed what require_memory allows.
  Buffer allocate(size_t bytes, MemKind kind = MemKind::device);
  virtual void release(void* ptr, MemKind kind) = 0;
  // Bytes a point may allocate: the device's memory, or on the host the memory available
  // now (MemAvailable), which overcommit would otherwise hide until the pages are touched.
  virtual double available_memory_bytes() const { return static_cast<double>(info().memory_bytes); }

  // The stream all work of this backend goes to (nullptr on the host).
  virtual void* stream() = 0;
  virtual void synchronize() = 0;
  virtual std::unique_ptr<DeviceTimer> make_timer() = 0;

  // Copies between any two buffers of this backend (direction inferred), asynchronous
  // on the stream for GPUs.
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  // Uniform random values in [lo, hi) converted to `type`, a pure function of (seed, index),
  // so the same seed gives the same data on every backend.
  virtual void fill_random(void* dst, size_t count, DType type, uint64_t seed, double lo, double hi) = 0;
  // Every element set to `value` (NaN is the poison for float outputs).
  virtual void fill_constant(void* dst, size_t count, DType type, double value) = 0;
  // Evicts the last-level cache before a cold sample (writes a buffer twice llc_bytes).
  virtual void flush_cache() = 0;

  // Convenience: device buffer contents converted to double on the host.
  std::vector<double> to_host_doubles(const void* src, size_t count, DType type);

 protected:
  virtual void* raw_allocate(size_t bytes, MemKind kind) = 0;
};

// Before allocating: throws SkipPoint ("needs 96 GiB of device memory for A, B and D; NAME
// has 80 GiB") when `bytes` exceed 95% of available_memory_bytes(). `bytes` is a double,
// summed from double products, so a shape like 4G x 4G x 4G cannot wrap to a small number.
void require_memory(const Backend& backend, double bytes, const std::string& what);

// "auto" picks cuda, then hip, then host. Throws UsageError for an unknown name or a
// backend that this build lacks or that has no device.
std::unique_ptr<Backend> make_backend(const std::string& name, int device_index = 0);
// Names of the backends compiled into this build, for --help and the sidecar.
std::vector<std::string> compiled_backends();
// Number of usable devices of a GPU backend (0 when none or when the driver is missing).
int gpu_device_count(const std::string& backend);
// What `auto` means for a run on device `device_index`: the first of cuda, hip with such a
// device, else host. Other names are returned as given.
std::string resolve_backend_name(const std::string& name, int device_index = 0);

}  // namespace gpucal
