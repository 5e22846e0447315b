// Host-memory implementation of DeviceOps (also used by the GPU implementations for
// pageable and pinned host buffers), and the factory that picks one per backend.
#include <cstring>

#include "bench_p2p/byte_pattern.h"
#include "bench_p2p/device_ops.h"
#include "core/errors.h"

namespace gpucal::p2p {

void host_fill_pattern(void* dst, size_t bytes, uint64_t seed, bool poison) {
  auto* out = static_cast<uint8_t*>(dst);
  const uint64_t flip = poison ? ~0ull : 0ull;
  const size_t words = bytes / 8;
  for (size_t w = 0; w < words; ++w) {
    const uint64_t v = pattern_word(seed, w) ^ flip;
    std::memcpy(out + 8 * w, &v, 8);  // little-endian: byte i of the word is byte 8w+i
  }
  for (size_t i = 8 * words; i < bytes; ++i) out[i] = static_cast<uint8_t>(pattern_byte(seed, i) ^ flip);
}

int64_t host_count_wrong(const void* p, size_t bytes, uint64_t seed) {
  const auto* in = static_cast<const uint8_t*>(p);
  int64_t wrong = 0;
  const size_t words = bytes / 8;
  for (size_t w = 0; w < words; ++w) {
    uint64_t got;
    std::memcpy(&got, in + 8 * w, 8);
    uint64_t diff = got ^ pattern_word(seed, w);
    for (; diff; diff >>= 8) wrong += (diff & 0xff) ? 1 : 0;
  }
  for (size_t i = 8 * words; i < bytes; ++i) wrong += in[i] != pattern_byte(seed, i) ? 1 : 0;
  return wrong;
}

namespace {

class HostDeviceOps : public DeviceOps {
 public:
  void fill_pattern(void* dst, size_t bytes, MemKind, uint64_t seed, bool poison, int) override {
    host_fill_pattern(dst, bytes, seed, poison);
  }
  int64_t count_wrong(const void* p, size_t bytes, MemKind, uint64_t seed, int) override {
    return host_count_wrong(p, bytes, seed);
  }
  void corrupt_byte(void* p, MemKind) override { *static_cast<uint8_t*>(p) ^= 0x5a; }
  void sm_copy(void*, const void*, size_t) override { throw SkipPoint("the host backend has no SM copy kernel"); }
  PeerBuffer allocate_peer(int, size_t, bool) override { throw SkipPoint("the host backend has no peer devices"); }
  void peer_copy(void*, int, const void*, size_t) override { throw SkipPoint("the host backend has no peer devices"); }
  std::string device_link_class(int) const override { return "same-device"; }
  std::string host_link_class() const override { return "same-device"; }
  std::string link_class_to(const std::string&) const override { return "shm"; }
};

}  // namespace

#if defined(GPUCAL_HAVE_CUDA)
namespace cuda {
std::unique_ptr<DeviceOps> make_gpu_device_ops(Backend& backend);
}
#endif
#if defined(GPUCAL_HAVE_HIP)
namespace hip {
std::unique_ptr<DeviceOps> make_gpu_device_ops(Backend& backend);
}
#endif

std::unique_ptr<DeviceOps> make_device_ops(Backend& backend) {
#if defined(GPUCAL_HAVE_CUDA)
  if (backend.name() == "cuda") return cuda::make_gpu_device_ops(backend);
#endif
#if defined(GPUCAL_HAVE_HIP)
  if (backend.name() == "hip") return hip::make_gpu_device_ops(backend);
#endif
  if (!backend.is_host()) throw UsageError("bench_p2p: no device operations for backend '" + backend.name() + "'");
  return std::make_unique<HostDeviceOps>();
}

}  // namespace gpucal::p2p
