#include "core/backend/last_level_cache.h"

namespace gpucal {

namespace {

struct KnownCache {
  const char* arch;
  size_t mib;
  const char* what;
};

// AMD Infinity Cache per architecture (the largest part of that architecture, so a flush
// sized from it evicts on every part): CDNA3/CDNA4 (AMD Instinct MI300 and MI350 series data
// sheets) and RDNA2/RDNA3 (Radeon RX 6000/7000 specifications). NVIDIA's L2 is the last
// level and is reported, so NVIDIA needs no entry.
constexpr KnownCache kKnown[] = {
    {"gfx940", 256, "Infinity Cache (MI300)"},   {"gfx941", 256, "Infinity Cache (MI300)"},
    {"gfx942", 256, "Infinity Cache (MI300X/MI300A/MI325X)"}, {"gfx950", 256, "Infinity Cache (MI350X/MI355X)"},
    {"gfx1030", 128, "Infinity Cache (Navi 21)"}, {"gfx1031", 96, "Infinity Cache (Navi 22)"},
    {"gfx1032", 32, "Infinity Cache (Navi 23)"},  {"gfx1100", 96, "Infinity Cache (Navi 31)"},
    {"gfx1101", 64, "Infinity Cache (Navi 32)"},  {"gfx1102", 32, "Infinity Cache (Navi 33)"},
};

}  // namespace

LastLevelCache last_level_cache(const std::string& arch, size_t reported_l2_bytes) {
  for (const KnownCache& k : kKnown) {
    const size_t bytes = k.mib << 20;
    if (arch == k.arch && bytes > reported_l2_bytes)
      return {bytes, std::string("table: ") + k.arch + " " + k.what + " " + std::to_string(k.mib) + " MiB"};
  }
  return {reported_l2_bytes, "reported L2"};
}

}  // namespace gpucal
