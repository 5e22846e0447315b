#include <gtest/gtest.h>

#include <cmath>

#include "core/backend/dtype.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"

using namespace gpucal;

TEST(DType, ParseNamesAndAliases) {
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("half"), DType::fp16);
  EXPECT_EQ(parse_dtype("e4m3"), DType::fp8_e4m3);
  EXPECT_THROW(parse_dtype("fp12"), UsageError);
  EXPECT_EQ(parse_dtype_list("fp32,tf32").size(), 2u);
  EXPECT_EQ(dtype_bytes(DType::tf32), 4u);
  EXPECT_DOUBLE_EQ(dtype_unit_roundoff(DType::fp32), std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(dtype_unit_roundoff(DType::bf16), std::ldexp(1.0, -8));
  EXPECT_DOUBLE_EQ(dtype_unit_roundoff(DType::int8), 0.0);
}

TEST(ElementConvert, Fp16KnownPatterns) {
  using namespace gpucal::elem;
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7c00);  // rounds to infinity
  EXPECT_EQ(float_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even, upward
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16(NAN))));
  for (float f : {0.5f, -0.333251953125f, 1000.0f, std::ldexp(1.0f, -20)}) EXPECT_EQ(fp16_to_float(float_to_fp16(f)), f);
}

TEST(ElementConvert, Bf16AndFp8) {
  using namespace gpucal::elem;
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(float_to_bf16(3.140625f)), 3.140625f);
  EXPECT_EQ(float_to_e4m3(448.0f), 0x7e);
  EXPECT_EQ(float_to_e4m3(1e6f), 0x7e);  // saturates: e4m3 has no infinity
  EXPECT_EQ(float_to_e4m3(std::ldexp(1.0f, -9)), 0x01);
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7f)));
  EXPECT_EQ(float_to_e5m2(57344.0f), 0x7b);
  EXPECT_EQ(e5m2_to_float(0x3c), 1.0f);
}

TEST(ElementConvert, RandomStreamIsDeterministicAndUniform) {
  using namespace gpucal::elem;
  double sum = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    double u = uniform01(42, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
  EXPECT_EQ(uniform01(42, 7), uniform01(42, 7));
  EXPECT_NE(uniform01(42, 7), uniform01(43, 7));
}
