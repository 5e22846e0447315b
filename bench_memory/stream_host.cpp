// Host STREAM kernels (copy, scale, add, triad) and the read-only reduction: plain loops
// over each thread's contiguous chunk, as McCalpin's stream.c with OpenMP. Arithmetic in
// fp32; 16-bit storage is converted on load and store (copy moves the bits unchanged).
#include "bench_memory/host_parallel.h"

namespace gpucal::memory::host {

namespace {

template <typename S>
void stream_typed(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t n = a.dims.n;
  const float q = a.s.q;
  switch (a.kernel) {
    case Kernel::copy: {
      const T* __restrict src = tensor<T>(a, 0);
      T* __restrict dst = tensor<T>(a, 1);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) dst[i] = src[i];
      });
      return;
    }
    case Kernel::scale: {
      const T* __restrict c = tensor<T>(a, 0);
      T* __restrict out = tensor<T>(a, 1);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) out[i] = S::store(q * S::load(c[i]));
      });
      return;
    }
    case Kernel::add: {
      const T* __restrict x = tensor<T>(a, 0);
      const T* __restrict y = tensor<T>(a, 1);
      T* __restrict out = tensor<T>(a, 2);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) out[i] = S::store(S::load(x[i]) + S::load(y[i]));
      });
      return;
    }
    case Kernel::triad: {
      const T* __restrict x = tensor<T>(a, 0);
      const T* __restrict y = tensor<T>(a, 1);
      T* __restrict out = tensor<T>(a, 2);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) out[i] = S::store(S::load(x[i]) + q * S::load(y[i]));
      });
      return;
    }
    case Kernel::read: {
      // One partial sum per chunk of read_chunk(n) elements (kernel_table.h); the slots are
      // split over threads.
      const T* __restrict x = tensor<T>(a, 0);
      float* __restrict sums = tensor<float>(a, 1);
      const int64_t chunk = read_chunk(n);
      parallel_chunks(read_slots(n), std::max<int64_t>(1, kGrain / chunk), [=](int64_t b, int64_t e, int) {
        for (int64_t p = b; p < e; ++p) {
          const int64_t lo = p * chunk, hi = lo + chunk < n ? lo + chunk : n;
          sums[p] = lane_sum(lo, hi, [=](int64_t i) { return S::load(x[i]); });
        }
      });
      return;
    }
    default: throw std::logic_error("host::stream: not a STREAM kernel");
  }
}

}  // namespace

void stream(const LaunchArgs& a) {
  with_storage(a.dtype, [&](auto s) { stream_typed<decltype(s)>(a); });
}

}  // namespace gpucal::memory::host
