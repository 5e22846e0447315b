// Host fp16 <-> float through the compiler's _Float16 (GCC 12+ on x86-64, Clang): F16C's
// vcvtph2ps/vcvtps2ph where the code is compiled for it (bench_memory's x86-64-v3/v4
// clones), libgcc's IEEE routines elsewhere; the portable float_to_fp16/fp16_to_float of
// core/backend/element_convert.h without _Float16. All round to nearest even; a NaN becomes the
// portable path's quiet NaN of the same sign (the hardware keeps payloads), so every path
// agrees bit for bit on every input (tests/unit/test_fp16_host.cpp). NaNs are told by their
// bits: a float or _Float16 comparison would become a libgcc call per element (__nehf2).
// Host code only: device code uses element_convert.h.
#pragma once

#include <cstdint>

#include "core/backend/element_convert.h"

namespace gpucal::elem {

#if defined(__FLT16_MAX__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define GPUCAL_HAVE_FLOAT16 1
inline float fp16_to_float_host(uint16_t h) {
  const float f = static_cast<float>(__builtin_bit_cast(_Float16, h));
  return (h & 0x7fffu) > 0x7c00u ? bits_float((static_cast<uint32_t>(h & 0x8000u) << 16) | 0x7fc00000u) : f;
}
inline uint16_t float_to_fp16_host(float f) {
  const uint16_t h = __builtin_bit_cast(uint16_t, static_cast<_Float16>(f));
  const uint32_t x = float_bits(f);
  return (x & 0x7fffffffu) > 0x7f800000u ? static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7e00u) : h;
}
#else
inline float fp16_to_float_host(uint16_t h) { return fp16_to_float(h); }
inline uint16_t float_to_fp16_host(float f) { return float_to_fp16(f); }
#endif

}  // namespace gpucal::elem
