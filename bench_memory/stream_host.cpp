// Host STREAM kernels (copy, the element-wise formulas of core/formulas/stream_ops.h) and the
// read-only reduction: plain loops over each thread's contiguous chunk, as McCalpin's stream.c
// with OpenMP. Arithmetic in fp32; 16-bit storage is converted on load and store (copy moves
// the bits unchanged).
#include "bench_memory/host_parallel.h"
#include "core/formulas/stream_ops.h"

namespace gpucal::memory::host {

namespace {

// out = op(x, y, q) per element, out in its own array (restrict) or in place over x or y.
template <typename S, typename Op>
void elementwise(const LaunchArgs& a, Op op) {
  using T = typename S::T;
  const StreamOperands o = stream_operands(kernel_desc(a.kernel));
  const int64_t n = a.dims.n;
  const float q = a.s.q;
  const T* x = tensor<T>(a, o.x);
  const T* y = o.y < 0 ? nullptr : tensor<T>(a, o.y);
  T* out = tensor<T>(a, o.out);
  if (o.out == o.x || o.out == o.y) {
    parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
      for (int64_t i = b; i < e; ++i) out[i] = S::store(op(S::load(x[i]), Op::inputs > 1 ? S::load(y[i]) : 0.0f, q));
    });
    return;
  }
  const T* __restrict xr = x;
  const T* __restrict yr = y;
  T* __restrict outr = out;
  parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) outr[i] = S::store(op(S::load(xr[i]), Op::inputs > 1 ? S::load(yr[i]) : 0.0f, q));
  });
}

template <typename S>
void stream_typed(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t n = a.dims.n;
  switch (a.kernel) {
    case Kernel::copy: {
      const T* __restrict src = tensor<T>(a, 0);
      T* __restrict dst = tensor<T>(a, 1);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) dst[i] = src[i];
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
    default:
      if (!with_stream_op(a.kernel, [&](auto op) { elementwise<S>(a, op); }))
        throw std::logic_error("host::stream: not a STREAM kernel");
  }
}

}  // namespace

void stream(const LaunchArgs& a) {
  with_storage(a.dtype, [&](auto s) { stream_typed<decltype(s)>(a); });
}

}  // namespace gpucal::memory::host
