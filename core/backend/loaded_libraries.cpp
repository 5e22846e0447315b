#include "core/backend/loaded_libraries.h"

#include <link.h>
#include <limits.h>
#include <stdlib.h>

#include <regex>

namespace gpucal {

namespace {

int collect(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<LoadedLibrary>*>(data);
  const std::string path = info->dlpi_name ? info->dlpi_name : "";
  if (path.empty()) return 0;  // the executable itself
  const std::string name = path.substr(path.find_last_of('/') + 1);
  static const std::regex runtime(R"(^(linux-vdso|linux-gate|ld-linux[^/]*|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+)\.so.*)");
  if (std::regex_match(name, runtime)) return 0;
  char real[PATH_MAX];
  out->push_back({name, realpath(path.c_str(), real) ? std::string(real) : path});
  return 0;
}

}  // namespace

std::vector<LoadedLibrary> loaded_libraries() {
  std::vector<LoadedLibrary> out;
  dl_iterate_phdr(collect, &out);
  return out;
}

}  // namespace gpucal
