#include "core/world/nccl_versions.h"

namespace gpucal {

namespace {
// The code as major*10000 + minor*100 + patch whichever encoding the library used.
int normalized(int code) { return code >= 10000 ? code : (code / 1000) * 10000 + (code / 100 % 10) * 100 + code % 100; }
}  // namespace

std::string nccl_version_text(int code) {
  const int v = normalized(code);
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

bool nccl_has_fp8(int code) { return normalized(code) >= 22400; }
bool nccl_has_alltoall(int code) { return normalized(code) >= 22800; }

}  // namespace gpucal
