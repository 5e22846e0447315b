// The host's hardware fp16 conversions (core/backend/half_host.h: _Float16, F16C where the
// code is compiled for it) agree bit for bit with the portable narrow_float/widen_float
// path: every one of the 65536 half patterns widened, and floats narrowed around every
// rounding boundary (the midpoints between consecutive halves, where round-to-nearest-even
// decides, and one ulp either side), across subnormals, overflow to infinity and NaNs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/backend/half_host.h"

using namespace gpucal::elem;

namespace {

// The conversions as bench_memory's default clone compiles them (libgcc's routines on
// x86-64 without F16C).
void widen_default(const std::vector<uint16_t>& in, std::vector<float>& out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = fp16_to_float_host(in[i]);
}
void narrow_default(const std::vector<float>& in, std::vector<uint16_t>& out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = float_to_fp16_host(in[i]);
}

#if defined(GPUCAL_HAVE_FLOAT16) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GPUCAL_TEST_F16C 1
// As the x86-64-v3 clone compiles them: vcvtph2ps / vcvtps2ph.
__attribute__((target("arch=x86-64-v3"))) void widen_f16c(const std::vector<uint16_t>& in, std::vector<float>& out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = fp16_to_float_host(in[i]);
}
__attribute__((target("arch=x86-64-v3"))) void narrow_f16c(const std::vector<float>& in, std::vector<uint16_t>& out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = float_to_fp16_host(in[i]);
}
#endif

using Widen = void (*)(const std::vector<uint16_t>&, std::vector<float>&);
using Narrow = void (*)(const std::vector<float>&, std::vector<uint16_t>&);

struct Path {
  const char* name;
  Widen widen;
  Narrow narrow;
};

std::vector<Path> paths() {
  std::vector<Path> p = {{"default", widen_default, narrow_default}};
#ifdef GPUCAL_TEST_F16C
  if (__builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    p.push_back({"f16c", widen_f16c, narrow_f16c});
#endif
  return p;
}

std::vector<float> boundary_floats() {
  std::vector<float> f;
  for (uint32_t h = 0; h < 0x7c00u; ++h) {  // finite positive halves; each with its successor
    const float lo = fp16_to_float(static_cast<uint16_t>(h));
    const float hi = h + 1 < 0x7c00u ? fp16_to_float(static_cast<uint16_t>(h + 1)) : 65536.0f;  // next: 2^16
    const float mid = 0.5f * (lo + hi);  // exact: a half has 11 significant bits, a float 24
    for (float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      f.push_back(v);
      f.push_back(-v);
    }
  }
  // Float subnormals, values far beyond the range, infinities, NaNs with payloads.
  for (uint32_t bits : {0x00000001u, 0x00400000u, 0x007fffffu, 0x00800000u, 0x33000000u, 0x33000001u, 0x477fefffu,
                        0x477ff000u, 0x477ff001u, 0x4f000000u, 0x7f7fffffu, 0x7f800000u, 0x7f800001u, 0x7fc00000u,
                        0x7fc01234u, 0x7fffffffu, 0x7fa00000u}) {
    f.push_back(bits_float(bits));
    f.push_back(bits_float(bits | 0x80000000u));
  }
  // A coarse stride over every float pattern.
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 65537) f.push_back(bits_float(static_cast<uint32_t>(bits)));
  return f;
}

}  // namespace

TEST(Fp16Host, WideningAgreesWithThePortablePathOnAllHalves) {
  std::vector<uint16_t> in(65536);
  for (uint32_t h = 0; h < 65536; ++h) in[h] = static_cast<uint16_t>(h);
  for (const Path& p : paths()) {
    std::vector<float> out(in.size());
    p.widen(in, out);
    int mismatches = 0;
    for (uint32_t h = 0; h < 65536; ++h)
      if (float_bits(out[h]) != float_bits(fp16_to_float(in[h])) && ++mismatches <= 5)
        ADD_FAILURE() << p.name << ": half 0x" << std::hex << h << " -> 0x" << float_bits(out[h]) << ", portable 0x"
                      << float_bits(fp16_to_float(in[h]));
    EXPECT_EQ(mismatches, 0) << p.name;
  }
}

TEST(Fp16Host, NarrowingRoundsToNearestEvenLikeThePortablePath) {
  const std::vector<float> in = boundary_floats();
  ASSERT_GT(in.size(), 300000u);  // 8 per finite half, 65536 strided patterns
  for (const Path& p : paths()) {
    std::vector<uint16_t> out(in.size());
    p.narrow(in, out);
    int mismatches = 0;
    for (size_t i = 0; i < in.size(); ++i)
      if (out[i] != float_to_fp16(in[i]) && ++mismatches <= 5)
        ADD_FAILURE() << p.name << ": float 0x" << std::hex << float_bits(in[i]) << " -> 0x" << out[i]
                      << ", portable 0x" << float_to_fp16(in[i]);
    EXPECT_EQ(mismatches, 0) << p.name;
  }
  // The boundaries themselves: ties go to the even neighbour, anything past a tie goes up.
  EXPECT_EQ(float_to_fp16_host(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_fp16_host(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  EXPECT_EQ(float_to_fp16_host(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_fp16_host(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_fp16_host(std::nextafter(65520.0f, 0.0f)), 0x7bff);
}
