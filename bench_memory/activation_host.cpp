// Host GELU and SwiGLU, forward and backward: elementwise over rows x cols (the row
// structure does not matter), fp32 arithmetic through op_math.h.
#include "bench_memory/host_parallel.h"
#include "bench_memory/op_math.h"

namespace gpucal::memory::host {

namespace {

template <typename S>
void activation_typed(const LaunchArgs& a) {
  using T = typename S::T;
  const int64_t n = a.dims.rows * a.dims.cols;
  switch (a.kernel) {
    case Kernel::gelu_fwd: {
      const T* x = tensor<T>(a, 0);
      T* y = tensor<T>(a, 1);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) y[i] = S::store(math::gelu(S::load(x[i])));
      });
      return;
    }
    case Kernel::gelu_bwd: {
      const T* x = tensor<T>(a, 0);
      const T* dy = tensor<T>(a, 1);
      T* dx = tensor<T>(a, 2);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) dx[i] = S::store(S::load(dy[i]) * math::gelu_grad(S::load(x[i])));
      });
      return;
    }
    case Kernel::swiglu_fwd: {
      const T* ga = tensor<T>(a, 0);
      const T* up = tensor<T>(a, 1);
      T* y = tensor<T>(a, 2);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
          const float g = S::load(ga[i]);
          y[i] = S::store(g * math::sigmoid(g) * S::load(up[i]));
        }
      });
      return;
    }
    case Kernel::swiglu_bwd: {
      const T* ga = tensor<T>(a, 0);
      const T* up = tensor<T>(a, 1);
      const T* dy = tensor<T>(a, 2);
      T* dga = tensor<T>(a, 3);
      T* dup = tensor<T>(a, 4);
      parallel_chunks(n, kGrain, [=](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
          const float g = S::load(ga[i]), u = S::load(up[i]), d = S::load(dy[i]);
          const float sg = math::sigmoid(g);
          dga[i] = S::store(d * u * sg * (1.0f + g * (1.0f - sg)));
          dup[i] = S::store(d * g * sg);
        }
      });
      return;
    }
    default: throw std::logic_error("host::activation: not an activation kernel");
  }
}

}  // namespace

void activation(const LaunchArgs& a) {
  with_storage(a.dtype, [&](auto s) { activation_typed<decltype(s)>(a); });
}

}  // namespace gpucal::memory::host
