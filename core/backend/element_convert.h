// Element encoding shared by host and device code: float <-> fp16/bf16/fp8 bit patterns
// (round to nearest even), and a counter-based random stream, so a (seed, index) pair
// yields the same value on every backend.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define GPUCAL_HD __host__ __device__ inline
#else
#define GPUCAL_HD inline
#endif

namespace gpucal::elem {

GPUCAL_HD uint32_t float_bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}
GPUCAL_HD float bits_float(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

// Generic IEEE-style narrowing of a float to a format with `exp_bits`/`man_bits`,
// round to nearest even, saturating to the largest finite value when `saturate`
// (fp8 e4m3 has no infinity), subnormals kept.
GPUCAL_HD uint32_t narrow_float(float f, int exp_bits, int man_bits, bool has_inf, bool saturate) {
  uint32_t x = float_bits(f);
  uint32_t sign = (x >> 31) << (exp_bits + man_bits);
  uint32_t mag = x & 0x7fffffffu;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint32_t exp_all = (1u << exp_bits) - 1;
  // Largest finite: e4m3 (no inf) uses the top exponent with mantissa 110.
  const uint32_t max_finite = has_inf ? (((exp_all - 1) << man_bits) | ((1u << man_bits) - 1))
                                      : ((exp_all << man_bits) | ((1u << man_bits) - 2));
  if (mag > 0x7f800000u) {  // NaN
    return sign | (has_inf ? ((exp_all << man_bits) | (1u << (man_bits - 1))) : ((exp_all << man_bits) | ((1u << man_bits) - 1)));
  }
  int e = static_cast<int>(mag >> 23) - 127 + bias;  // target biased exponent
  uint32_t m = (mag & 0x7fffffu) | (mag >= 0x00800000u ? 0x800000u : 0u);
  if (mag < 0x00800000u) e = 1 - 127 + bias;  // float subnormal input
  int shift = 23 - man_bits;
  if (e <= 0) {  // target subnormal
    shift += 1 - e;
    e = 0;
  }
  uint32_t result;
  if (shift >= 32) {
    result = 0;
  } else {
    uint32_t kept = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (kept & 1u))) ++kept;
    // kept holds the implicit bit for normals; fold the exponent in (carry propagates).
    if (e == 0) {
      result = kept;  // subnormal (a carry into the implicit bit makes it the smallest normal)
    } else {
      result = (static_cast<uint32_t>(e) << man_bits) + (kept - (1u << man_bits));
    }
  }
  uint32_t limit_inf = exp_all << man_bits;
  if (has_inf && result >= limit_inf) return sign | (saturate ? max_finite : limit_inf);
  if (!has_inf && result > max_finite) return sign | max_finite;
  return sign | result;
}

GPUCAL_HD float widen_float(uint32_t v, int exp_bits, int man_bits, bool has_inf) {
  uint32_t sign = (v >> (exp_bits + man_bits)) & 1u;
  uint32_t e = (v >> man_bits) & ((1u << exp_bits) - 1);
  uint32_t m = v & ((1u << man_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint32_t exp_all = (1u << exp_bits) - 1;
  float out;
  if (e == exp_all && (has_inf || m == ((1u << man_bits) - 1))) {
    out = (has_inf && m == 0) ? bits_float(0x7f800000u) : bits_float(0x7fc00000u);
  } else if (e == 0) {
    float scale = bits_float(static_cast<uint32_t>(127 + 1 - bias - man_bits) << 23);  // 2^(1-bias-man)
    out = static_cast<float>(m) * scale;
  } else {
    out = bits_float(((e - bias + 127) << 23) | (m << (23 - man_bits)));
  }
  return sign ? -out : out;
}

GPUCAL_HD uint16_t float_to_fp16(float f) { return static_cast<uint16_t>(narrow_float(f, 5, 10, true, false)); }
GPUCAL_HD float fp16_to_float(uint16_t h) { return widen_float(h, 5, 10, true); }
GPUCAL_HD uint16_t float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}
GPUCAL_HD float bf16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }
GPUCAL_HD uint8_t float_to_e4m3(float f) { return static_cast<uint8_t>(narrow_float(f, 4, 3, false, true)); }
GPUCAL_HD float e4m3_to_float(uint8_t v) { return widen_float(v, 4, 3, false); }
GPUCAL_HD uint8_t float_to_e5m2(float f) { return static_cast<uint8_t>(narrow_float(f, 5, 2, true, false)); }
GPUCAL_HD float e5m2_to_float(uint8_t v) { return widen_float(v, 5, 2, true); }

// splitmix64 of (seed, index): independent of launch geometry.
GPUCAL_HD double uniform01(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

// Element `i` of a typed array as double, and the store of a double into it. `type_code`
// follows gpucal::DType's order (fp64, fp32, tf32, fp16, bf16, e4m3, e5m2, int8, int32, uint8).
GPUCAL_HD double load_as_double(const void* base, uint64_t i, int type_code) {
  switch (type_code) {
    case 0: return static_cast<const double*>(base)[i];
    case 1:
    case 2: return static_cast<const float*>(base)[i];
    case 3: return fp16_to_float(static_cast<const uint16_t*>(base)[i]);
    case 4: return bf16_to_float(static_cast<const uint16_t*>(base)[i]);
    case 5: return e4m3_to_float(static_cast<const uint8_t*>(base)[i]);
    case 6: return e5m2_to_float(static_cast<const uint8_t*>(base)[i]);
    case 7: return static_cast<const int8_t*>(base)[i];
    case 8: return static_cast<const int32_t*>(base)[i];
    default: return static_cast<const uint8_t*>(base)[i];
  }
}
GPUCAL_HD void store_from_double(void* base, uint64_t i, int type_code, double v) {
  switch (type_code) {
    case 0: static_cast<double*>(base)[i] = v; break;
    case 1:
    case 2: static_cast<float*>(base)[i] = static_cast<float>(v); break;
    case 3: static_cast<uint16_t*>(base)[i] = float_to_fp16(static_cast<float>(v)); break;
    case 4: static_cast<uint16_t*>(base)[i] = float_to_bf16(static_cast<float>(v)); break;
    case 5: static_cast<uint8_t*>(base)[i] = float_to_e4m3(static_cast<float>(v)); break;
    case 6: static_cast<uint8_t*>(base)[i] = float_to_e5m2(static_cast<float>(v)); break;
    case 7: static_cast<int8_t*>(base)[i] = static_cast<int8_t>(v); break;
    case 8: static_cast<int32_t*>(base)[i] = static_cast<int32_t>(v); break;
    default: static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v); break;
  }
}

}  // namespace gpucal::elem
