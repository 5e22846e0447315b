// The last-level cache a cold measurement must evict. GPUs report their L2
// (cudaDeviceProp/hipDeviceProp_t::l2CacheSize), but some have a larger cache behind it
// that the runtime does not report: AMD's Infinity Cache (MALL), 256 MB on MI300X where HIP
// reports 4 MB of L2 (per XCD). Cold flushes and rotated buffers are sized from the larger
// of the reported L2 and this per-architecture table; the sidecar records which it was.
#pragma once

#include <cstddef>
#include <string>

namespace gpucal {

struct LastLevelCache {
  size_t bytes = 0;
  std::string source;  // "reported L2" or "table: <arch> <what> <size>"
};

// arch: "gfx942", "sm_90", ... (the backend's DeviceInfo::arch); reported_l2_bytes: the
// runtime's l2CacheSize. Never below the reported L2.
LastLevelCache last_level_cache(const std::string& arch, size_t reported_l2_bytes);

}  // namespace gpucal
