// What the host implementations of bench_memory share: storage types (fp32, and bf16/fp16
// as 16-bit patterns converted through core/backend/element_convert.h, fp16 in hardware where the
// compiler offers _Float16: core/backend/half_host.h), the dtype dispatch, and
// the parallel loop. Work is split in contiguous static chunks over OpenMP threads (sized and
// bound by host_threads.h; STREAM's schedule(static), at least 8192 elements per thread); each
// chunk runs in a function compiled for x86-64-v4 (AVX-512),
// x86-64-v3 (AVX2 + FMA) and the baseline, picked at load time by the CPU (GCC
// target_clones), so the same binary uses the vector units the peak table counts.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "bench_memory/host_threads.h"
#include "bench_memory/launch_args.h"
#include "core/backend/half_host.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GPUCAL_HOST_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GPUCAL_HOST_CLONES
#endif

namespace gpucal::memory::host {

struct F32 {
  using T = float;
  static float load(T v) { return v; }
  static T store(float f) { return f; }
};
struct BF16 {
  using T = uint16_t;
  static float load(T v) { return elem::bf16_to_float(v); }
  static T store(float f) { return elem::float_to_bf16(f); }
};
struct FP16 {
  using T = uint16_t;
  static float load(T v) { return elem::fp16_to_float_host(v); }  // F16C in the x86-64-v3/v4 clones
  static T store(float f) { return elem::float_to_fp16_host(f); }
};

template <typename F>
void with_storage(DType t, F&& f) {
  with_storage_types<F32, BF16, FP16>(t, std::forward<F>(f));
}

template <typename F>
GPUCAL_HOST_CLONES void run_chunk(int64_t begin, int64_t end, int thread, const F& f) {
  f(begin, end, thread);
}

// The team of host_threads.h: sized to the CPUs this process may use, one thread per CPU.
inline int threads() { return thread_plan().threads; }

// Threads for n items when each thread should get at least `grain` of them: a parallel
// region costs microseconds to start and join (milliseconds on an oversubscribed machine),
// more than a few KiB of work per thread saves.
inline int threads_for(int64_t n, int64_t grain) {
  const int64_t wanted = (n + grain - 1) / std::max<int64_t>(grain, 1);
  return static_cast<int>(std::clamp<int64_t>(wanted, 1, threads()));
}

// f(begin, end, thread) on contiguous chunks of [0, n), one per OpenMP thread (at least
// `grain` items each; one thread runs inline without a parallel region).
constexpr int64_t kGrain = 8192;
template <typename F>
void parallel_chunks(int64_t n, int64_t grain, const F& f) {
  const int nt = threads_for(n, grain);
  if (nt == 1) {
    if (n > 0) run_chunk(0, n, 0, f);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), used = omp_get_num_threads();
    const int64_t begin = n * t / used, end = n * (t + 1) / used;
    if (begin < end) run_chunk(begin, end, static_cast<int>(t), f);
  }
}

// sum of term(i) for i in [lo, hi), in fp32 over kLanes independent partial sums (a fixed
// order the compiler can vectorize without reassociating: no -ffast-math), then added up.
constexpr int kLanes = 32;
template <typename F>
inline float lane_sum(int64_t lo, int64_t hi, const F& term) {
  float acc[kLanes] = {};
  int64_t i = lo;
  for (; i + kLanes <= hi; i += kLanes)
    for (int k = 0; k < kLanes; ++k) acc[k] += term(i + k);
  for (int k = 0; i < hi; ++i, ++k) acc[k] += term(i);
  float total = 0;
  for (int k = 0; k < kLanes; ++k) total += acc[k];
  return total;
}

// The row's max m and sum of exp(x - m) (softmax and cross-entropy), fp32.
template <typename S>
inline void row_max_sum(const typename S::T* xr, int64_t cols, float& m, float& sum) {
  m = -INFINITY;
  for (int64_t j = 0; j < cols; ++j) m = std::fmax(m, S::load(xr[j]));
  const float mx = m;
  sum = lane_sum(0, cols, [=](int64_t j) { return std::exp(S::load(xr[j]) - mx); });
}

// Grain in rows for row kernels: about 8192 elements per thread.
inline int64_t row_grain(int64_t cols) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(cols, 1)); }

template <typename T>
T* tensor(const LaunchArgs& a, int i) {
  return static_cast<T*>(a.tensors.at(static_cast<size_t>(i)));
}

// The kernel families (one file each).
void stream(const LaunchArgs& a);
void fma_chain(const LaunchArgs& a);
void norm(const LaunchArgs& a);
void softmax(const LaunchArgs& a);
void activation(const LaunchArgs& a);
void residual(const LaunchArgs& a);
void cross_entropy(const LaunchArgs& a);
void adamw(const LaunchArgs& a);
// Scratch bytes a launch needs (partial column sums of the norm backward passes).
size_t norm_workspace_bytes(Kernel k, const Dims& d);

}  // namespace gpucal::memory::host
