// NCCL features gated on the loaded library's ncclGetVersion() code (core/world/nccl_versions.h).
#include <gtest/gtest.h>

#include "core/world/nccl_versions.h"

using namespace gpucal;

TEST(NcclVersions, BothEncodingsRead) {
  EXPECT_EQ(nccl_version_text(22803), "2.28.3");
  EXPECT_EQ(nccl_version_text(22405), "2.24.5");
  EXPECT_EQ(nccl_version_text(2804), "2.8.4");  // before 2.9: major*1000 + minor*100 + patch
}

TEST(NcclVersions, Fp8FromTwoTwentyFourAlltoallFromTwoTwentyEight) {
  EXPECT_FALSE(nccl_has_fp8(22304));
  EXPECT_TRUE(nccl_has_fp8(22400));
  EXPECT_TRUE(nccl_has_fp8(22803));
  EXPECT_FALSE(nccl_has_fp8(2804));
  EXPECT_FALSE(nccl_has_alltoall(22703));
  EXPECT_TRUE(nccl_has_alltoall(22800));
}
