#include "harness/malloc_policy.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "harness/errors.h"

namespace gpucal {

namespace {
// Below mallopt's int limit: allocations of 1 GiB and more are still mapped (and their pages
// returned), everything smaller is served from the heap, which is trimmed only beyond 1 GiB free.
constexpr int64_t kPinnedThresholdBytes = int64_t{1} << 30;

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

MallocPolicy malloc_policy_from_env(const std::function<const char*(const char*)>& getenv_fn) {
  const char* asked = getenv_fn("GPUCAL_MALLOC");
  const std::string mode = asked ? asked : "pinned";
  if (mode != "pinned" && mode != "glibc")
    throw UsageError("GPUCAL_MALLOC='" + mode + "': expected pinned (the default) or glibc");
#if !defined(__GLIBC__)
  return {"unavailable", "not built against glibc: the C library's own malloc policy", 0, 0};
#else
  if (mode == "glibc") return {"glibc", "GPUCAL_MALLOC=glibc: glibc's dynamic thresholds", 0, 0};
  std::string which;
  if (user_sets_malloc(getenv_fn, &which))
    return {"user", which + " is set: the user's malloc settings, untouched", 0, 0};
  return {"pinned", "thresholds pinned so no point depends on the allocation history (GPUCAL_MALLOC=glibc: off)",
          kPinnedThresholdBytes, kPinnedThresholdBytes};
#endif
}

std::string apply_malloc_policy(const MallocPolicy& p) {
  if (p.policy != "pinned") return "";
#if defined(__GLIBC__)
  static_assert(kPinnedThresholdBytes <= INT_MAX, "mallopt takes an int");
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(p.mmap_threshold_bytes)) != 1 ||
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(p.trim_threshold_bytes)) != 1)
    return "glibc refused the pinned malloc thresholds (mallopt); running with its defaults";
#endif
  return "";
}

nlohmann::json malloc_policy_json(const MallocPolicy& p) {
  nlohmann::json j = {{"policy", p.policy}, {"reason", p.reason}};
  if (p.policy == "pinned") {
    j["mmap_threshold_bytes"] = p.mmap_threshold_bytes;
    j["trim_threshold_bytes"] = p.trim_threshold_bytes;
  }
  return j;
}

}  // namespace gpucal
