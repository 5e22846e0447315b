// Host fma_chain: blocks of 128 fp32 elements held in 8 vector registers of 16 lanes (GCC
// vector extensions; 4 or 2 registers each on narrower ISAs), each register an independent
// chain x = x * m + c, so 8 FMAs are in flight: enough to cover FMA latency x pipes on
// current x86 cores. The tail (n % 128) runs the same chain one element at a time. fp16 and
// bf16 have no vector FMA on the host: those points are recorded skips (memory_impls.cpp).
#include "bench_memory/host_parallel.h"

namespace gpucal::memory::host {

namespace {

typedef float v16f __attribute__((vector_size(64)));
constexpr int kChains = 8, kLanes = 16, kBlock = kChains * kLanes;

}  // namespace

void fma_chain(const LaunchArgs& a) {
  if (a.dtype != DType::fp32) throw std::invalid_argument("host fma_chain runs fp32 only");
  const float* __restrict x = tensor<float>(a, 0);
  float* __restrict y = tensor<float>(a, 1);
  const float m = a.s.fma_m, c = a.s.fma_c;
  const int steps = a.s.fma_steps;
  const int64_t blocks = a.dims.n / kBlock;
  parallel_chunks(blocks, 1, [=](int64_t b, int64_t e, int) {
    for (int64_t blk = b; blk < e; ++blk) {
      v16f r[kChains];
      __builtin_memcpy(r, x + blk * kBlock, sizeof r);
      for (int s = 0; s < steps; ++s)
        for (int j = 0; j < kChains; ++j) r[j] = r[j] * m + c;
      __builtin_memcpy(y + blk * kBlock, r, sizeof r);
    }
  });
  for (int64_t i = blocks * kBlock; i < a.dims.n; ++i) {
    float v = x[i];
    for (int s = 0; s < steps; ++s) v = v * m + c;
    y[i] = v;
  }
}

}  // namespace gpucal::memory::host
