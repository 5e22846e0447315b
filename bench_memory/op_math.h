// The per-element math of the bench_memory kernels in fp32, written once for the host and
// the device implementations (GPUCAL_HD). The fp64 reference (memory_reference.cpp) is
// written separately, from the formulas, so that a mistake here is caught there.
#pragma once

#include <cmath>
#include <cstdint>

#include "bench_memory/launch_args.h"
#include "core/backend/element_convert.h"

namespace gpucal::memory::math {

// GELU, exact erf form: x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2.
GPUCAL_HD float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
// d/dx GELU = Phi(x) + x * phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
GPUCAL_HD float gelu_grad(float x) {
  return 0.5f * (1.0f + erff(x * 0.70710678118654752f)) + x * 0.39894228040143268f * expf(-0.5f * x * x);
}
GPUCAL_HD float sigmoid(float a) { return 1.0f / (1.0f + expf(-a)); }

// Dropout's keep decision for element i: a 32-bit hash of (seed, i) compared with p * 2^32,
// the same on every backend and in the reference.
GPUCAL_HD uint32_t hash32(uint32_t seed, uint64_t i) {
  uint32_t h = seed ^ static_cast<uint32_t>(i) ^ (static_cast<uint32_t>(i >> 32) * 0x9e3779b9u);
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  return h;
}
GPUCAL_HD uint32_t dropout_threshold(float p) { return static_cast<uint32_t>(static_cast<double>(p) * 4294967296.0); }
GPUCAL_HD bool dropout_keep(uint32_t seed, uint64_t i, uint32_t threshold) { return hash32(seed, i) >= threshold; }

// AdamW on one parameter, in place on (p, m, v), as torch.optim.AdamW: p *= 1 - lr * wd;
// m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps).
struct AdamWConstants {
  float lr, beta1, beta2, eps, decay, step_size, inv_sqrt_bc2;
};
inline AdamWConstants adamw_constants(const Scalars& s) {
  const double bc1 = 1.0 - std::pow(static_cast<double>(s.beta1), s.adam_step);
  const double bc2 = 1.0 - std::pow(static_cast<double>(s.beta2), s.adam_step);
  return {s.lr, s.beta1, s.beta2, s.adam_eps, static_cast<float>(1.0 - static_cast<double>(s.lr) * s.weight_decay),
          static_cast<float>(s.lr / bc1), static_cast<float>(1.0 / std::sqrt(bc2))};
}
GPUCAL_HD void adamw(float& p, float g, float& m, float& v, const AdamWConstants& c) {
  m = c.beta1 * m + (1.0f - c.beta1) * g;
  v = c.beta2 * v + (1.0f - c.beta2) * g * g;
  p = p * c.decay - c.step_size * m / (sqrtf(v) * c.inv_sqrt_bc2 + c.eps);
}

}  // namespace gpucal::memory::math
