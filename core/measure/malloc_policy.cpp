#include "core/measure/malloc_policy.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/errors.h"

// AddressSanitizer (and its clang spelling) replaces malloc with its own allocator, which takes no
// mallopt settings: a sanitizer build has no glibc malloc policy to pin.
#if defined(__SANITIZE_ADDRESS__)
#define GPUCAL_ASAN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUCAL_ASAN_ALLOCATOR 1
#endif
#endif

namespace gpucal {

namespace {
bool user_sets_malloc(const std::function<const char*(const char*)>& getenv_fn, std::string* which) {
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"})
    if (const char* v = getenv_fn(name); v && *v) {
      *which = name;
      return true;
    }
  if (const char* t = getenv_fn("GLIBC_TUNABLES"); t && std::string(t).find("glibc.malloc.") != std::string::npos) {
    *which = "GLIBC_TUNABLES";
    return true;
  }
  return false;
}
}  // namespace

bool malloc_is_glibcs() {
#if defined(GPUCAL_ASAN_ALLOCATOR) || !defined(__GLIBC__)
  return false;
#else
  return true;
#endif
}

MallocPolicy malloc_policy_from_env(const std::function<const char*(const char*)>& getenv_fn, bool glibc_malloc) {
  const char* asked = getenv_fn("GPUCAL_MALLOC");
  const std::string mode = asked ? asked : "pinned";
  if (mode != "pinned" && mode != "glibc")
    throw UsageError("GPUCAL_MALLOC='" + mode + "': expected pinned (the default) or glibc");
  if (!glibc_malloc)
    return {"unavailable",
            "malloc is not glibc's (another C library, or AddressSanitizer's allocator): gpucal sets no malloc options",
            false};
  if (mode == "glibc") return {"glibc", "GPUCAL_MALLOC=glibc: glibc's dynamic thresholds", false};
  std::string which;
  if (user_sets_malloc(getenv_fn, &which))
    return {"user", which + " is set: the user's malloc settings, untouched", false};
  return {"pinned",
          "malloc never maps or trims during the run, so no point depends on the allocation history "
          "(GPUCAL_MALLOC=glibc: glibc's defaults)",
          true};
}

MallocPolicy apply_malloc_policy(const MallocPolicy& p) {
  if (!p.sets_mallopt) return p;
#if defined(__GLIBC__)
  // M_MMAP_MAX 0: no allocation is served by mmap (glibc still maps as a fallback when the heap
  // cannot grow); M_TRIM_THRESHOLD -1: the heap's top is never given back (mallopt(3)).
  if (mallopt(M_MMAP_MAX, 0) != 1 || mallopt(M_TRIM_THRESHOLD, -1) != 1)
    return {"glibc", "glibc refused M_MMAP_MAX=0 / M_TRIM_THRESHOLD=-1 (mallopt); running with its defaults", false};
#endif
  return p;
}

nlohmann::json malloc_policy_json(const MallocPolicy& p) {
  nlohmann::json j = {{"policy", p.policy}, {"reason", p.reason}};
  if (p.sets_mallopt) {
    j["mmap_max"] = 0;
    j["trim_threshold"] = "off";
  }
  return j;
}

}  // namespace gpucal
