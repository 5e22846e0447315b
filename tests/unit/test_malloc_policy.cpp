#include "core/measure/malloc_policy.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <string>
#include <vector>

#include "core/errors.h"

namespace gpucal {
namespace {

// The policy for an environment, with glibc's malloc (the logic; what this build has is
// checked in MallocPolicy.ThisBuildsAllocatorDecides).
MallocPolicy policy_with(const std::map<std::string, std::string>& env, bool glibc_malloc = true) {
  return malloc_policy_from_env(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      glibc_malloc);
}

TEST(MallocPolicy, PinnedByDefaultTurnsMappingAndTrimmingOff) {
  const MallocPolicy p = policy_with({});
  EXPECT_EQ(p.policy, "pinned");
  EXPECT_TRUE(p.sets_mallopt);
  EXPECT_EQ(policy_with({{"GPUCAL_MALLOC", "pinned"}}).policy, "pinned");
  const nlohmann::json j = malloc_policy_json(p);
  EXPECT_EQ(j.at("mmap_max").get<int>(), 0);
  EXPECT_EQ(j.at("trim_threshold").get<std::string>(), "off");
  if (!malloc_is_glibcs()) GTEST_SKIP() << "this build's malloc is not glibc's: nothing to apply";
  const MallocPolicy applied = apply_malloc_policy(p);
  ASSERT_EQ(applied.policy, "pinned") << applied.reason;  // glibc takes them
  ASSERT_TRUE(applied.sets_mallopt);
#if defined(__GLIBC__)
  // In effect: 256 MiB, far above glibc's default 128 KiB mmap threshold, comes from the heap,
  // so the count of mapped chunks does not grow. Chunks mapped before the policy was applied stay
  // mapped and are counted (in the CUDA and HIP builds the GPU runtimes' load-time initialisers
  // leave one): compare, not zero.
  const size_t mapped_before = mallinfo2().hblks;
  void* big = std::malloc(size_t{256} << 20);
  ASSERT_NE(big, nullptr);
  static_cast<volatile char*>(big)[0] = 1;  // used, so the compiler keeps the allocation
  const size_t mapped_after = mallinfo2().hblks;
  std::free(big);
  EXPECT_EQ(mapped_after, mapped_before) << "a mapped chunk: M_MMAP_MAX=0 did not take";
#endif
}

TEST(MallocPolicy, GlibcOptOutSetsNothing) {
  const MallocPolicy p = policy_with({{"GPUCAL_MALLOC", "glibc"}});
  EXPECT_EQ(p.policy, "glibc");
  EXPECT_FALSE(p.sets_mallopt);
  EXPECT_FALSE(malloc_policy_json(p).contains("mmap_max"));
  EXPECT_EQ(apply_malloc_policy(p).policy, "glibc");
}

TEST(MallocPolicy, UsersOwnMallocSettingsWin) {
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"}) {
    const MallocPolicy p = policy_with({{name, "65536"}});
    EXPECT_EQ(p.policy, "user") << name;
    EXPECT_NE(p.reason.find(name), std::string::npos);
  }
  EXPECT_EQ(policy_with({{"GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1"}}).policy, "user");
  // Tunables of other glibc parts, and an empty MALLOC_ variable, are not malloc settings.
  EXPECT_EQ(policy_with({{"GLIBC_TUNABLES", "glibc.pthread.rseq=0"}}).policy, "pinned");
  EXPECT_EQ(policy_with({{"MALLOC_TRIM_THRESHOLD_", ""}}).policy, "pinned");
  // GPUCAL_MALLOC=glibc is checked first: the user asked for glibc's own behaviour.
  EXPECT_EQ(policy_with({{"GPUCAL_MALLOC", "glibc"}, {"MALLOC_TOP_PAD_", "1"}}).policy, "glibc");
}

TEST(MallocPolicy, UnknownPolicyIsAUsageError) {
  EXPECT_THROW(policy_with({{"GPUCAL_MALLOC", "fast"}}), UsageError);
  EXPECT_THROW(policy_with({{"GPUCAL_MALLOC", ""}}), UsageError);
  EXPECT_THROW(policy_with({{"GPUCAL_MALLOC", "fast"}}, false), UsageError);  // checked whatever the malloc
}

// Another allocator (an AddressSanitizer build's, another C library's) takes no mallopt settings:
// nothing is set, whatever the environment asks, and nothing is refused to warn about.
TEST(MallocPolicy, NotGlibcsMallocIsUnavailable) {
  for (const auto& env : std::vector<std::map<std::string, std::string>>{
           {}, {{"GPUCAL_MALLOC", "pinned"}}, {{"GPUCAL_MALLOC", "glibc"}}, {{"MALLOC_TOP_PAD_", "1"}}}) {
    const MallocPolicy p = policy_with(env, false);
    EXPECT_EQ(p.policy, "unavailable");
    EXPECT_FALSE(p.sets_mallopt);
    EXPECT_NE(p.reason.find("not glibc's"), std::string::npos) << p.reason;
    const MallocPolicy applied = apply_malloc_policy(p);
    EXPECT_EQ(applied.policy, "unavailable");
    EXPECT_EQ(applied.reason, p.reason);
  }
}

TEST(MallocPolicy, ThisBuildsAllocatorDecides) {
  const MallocPolicy p = malloc_policy_from_env([](const char*) -> const char* { return nullptr; });
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_TRUE(malloc_is_glibcs());
  EXPECT_EQ(p.policy, "pinned");
#else
  EXPECT_FALSE(malloc_is_glibcs());
  EXPECT_EQ(p.policy, "unavailable");
#endif
}

}  // namespace
}  // namespace gpucal
