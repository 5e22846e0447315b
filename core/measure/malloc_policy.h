#pragma once
// glibc's malloc thresholds, pinned for the whole run so that a measured operation's cost does
// not depend on what the process allocated before it.
//
// glibc adapts M_MMAP_THRESHOLD and M_TRIM_THRESHOLD to the sizes the process has freed so far
// (the "dynamic threshold"). A library that allocates a temporary per call (Open MPI's
// reduce_scatter_block at 2 ranks, for one) then either reuses heap memory or maps, faults in and
// unmaps its buffer on every call, depending on the allocation history: osu_reduce_scatter_block
// on this project's 2-core VM reads 25 us at 128 KiB when that is the first size it runs and
// 450-1400 us when a smaller size ran first; at 1 MiB the two states differ 20x. Pinning the
// thresholds high is not enough at the largest sizes (a 1 GiB reduce_scatter read 6.3 s after a
// sweep with both at 2 GiB - 1: the heap's top was trimmed and regrown per call), so gpucal turns
// both mechanisms off: malloc never maps (M_MMAP_MAX = 0) and never trims (M_TRIM_THRESHOLD = -1)
// during the run. The cost: memory a run frees stays with the process until it exits (its peak).
// Users keep control: GPUCAL_MALLOC=glibc leaves glibc's defaults, and any malloc setting of their
// own (MALLOC_*_ or glibc.malloc tunables) is respected.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpucal {

struct MallocPolicy {
  std::string policy = "glibc";  // "pinned" (gpucal's), "glibc" (GPUCAL_MALLOC=glibc, or nothing applied),
                                 // "user" (the user's MALLOC_* / GLIBC_TUNABLES), "unavailable" (not glibc's
                                 // malloc: another C library, or an AddressSanitizer build)
  std::string reason = "gpucal set no malloc options";  // one line: why this policy
  bool sets_mallopt = false;  // pinned: M_MMAP_MAX = 0 and M_TRIM_THRESHOLD = -1
};

// Whether this build allocates with glibc's malloc: false against another C library, and in an
// AddressSanitizer build (its allocator replaces malloc and takes no mallopt settings).
bool malloc_is_glibcs();

// A pure function of the environment (getenv is injected for tests) and of whether malloc is
// glibc's ("unavailable" when not). Throws UsageError for a GPUCAL_MALLOC value other than pinned
// or glibc.
MallocPolicy malloc_policy_from_env(const std::function<const char*(const char*)>& getenv_fn,
                                    bool glibc_malloc = malloc_is_glibcs());

// Applies the policy to this process (mallopt) and returns what is then in effect: the policy
// itself, or, when glibc refuses, "glibc" with the refusal as its reason (the caller warns).
MallocPolicy apply_malloc_policy(const MallocPolicy& p);

nlohmann::json malloc_policy_json(const MallocPolicy& p);

}  // namespace gpucal
