// The baseline gpucal's host GEMM figure is checked against: cblas_sgemm called directly
// (column-major NN, alpha 1, beta 0, the call bench_gemm's openblas impl makes), warmed up,
// then timed in back-to-back blocks with steady_clock. Prints the mean and the median time per
// call in µs (over blocks), the figures to compare with bench_gemm --regime hot's time_us_mean
// and time_us_median. The operands are
// allocated as the host backend allocates them (aligned_alloc, 256 bytes): with std::vector
// they sat 16 bytes past a page boundary (glibc maps allocations of 128 KiB and more), and the
// two layouts alone moved sgemm 256^3 by 4-7% on the 2-core VM.
// usage: openblas_direct M N K [SECONDS]
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <memory>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: openblas_direct M N K [SECONDS]\n");
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  const double seconds = argc > 4 ? std::atof(argv[4]) : 0.5;
  if (m < 1 || n < 1 || k < 1 || !(seconds > 0)) {
    std::fprintf(stderr, "openblas_direct: M, N, K and SECONDS must be positive\n");
    return 2;
  }
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  auto allocate = [](size_t count) {
    const size_t bytes = (count * sizeof(float) + 255) / 256 * 256;
    std::unique_ptr<float, Free> p(static_cast<float*>(std::aligned_alloc(256, bytes)));
    if (!p) {
      std::fprintf(stderr, "openblas_direct: cannot allocate %zu bytes\n", bytes);
      std::exit(1);
    }
    return p;
  };
  const size_t na = static_cast<size_t>(m) * k, nb = static_cast<size_t>(k) * n, nc = static_cast<size_t>(m) * n;
  auto a = allocate(na), b = allocate(nb), c = allocate(nc);
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (size_t i = 0; i < na; ++i) a.get()[i] = u(gen);
  for (size_t i = 0; i < nb; ++i) b.get()[i] = u(gen);
  for (size_t i = 0; i < nc; ++i) c.get()[i] = u(gen);  // overwritten (beta 0): never timed on zeros
  auto call = [&] {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f, a.get(), m, b.get(), k, 0.f, c.get(), m);
  };
  using clock = std::chrono::steady_clock;
  auto elapsed = [](clock::time_point t0) {
    return std::chrono::duration<double>(clock::now() - t0).count();
  };
  // Warm-up: 0.05 s (gpucal's default), then blocks of at least 100 µs (its hot batching).
  const auto w0 = clock::now();
  double one = 0;
  while (elapsed(w0) < 0.05) {
    const auto t = clock::now();
    call();
    one = elapsed(t);
  }
  const long block = one > 0 && one < 100e-6 ? static_cast<long>(100e-6 / one) + 1 : 1;
  long calls = 0;
  double timed = 0;
  std::vector<double> per_call;  // one entry per block
  per_call.reserve(1 << 16);
  const auto s0 = clock::now();
  while (elapsed(s0) < seconds) {
    const auto t = clock::now();
    for (long i = 0; i < block; ++i) call();
    const double e = elapsed(t);
    timed += e;
    calls += block;
    per_call.push_back(e / static_cast<double>(block));
  }
  std::sort(per_call.begin(), per_call.end());
  const size_t blocks = per_call.size();
  const double median = blocks % 2 ? per_call[blocks / 2] : 0.5 * (per_call[blocks / 2 - 1] + per_call[blocks / 2]);
  std::printf("%.4f %.4f\n", timed / static_cast<double>(calls) * 1e6, median * 1e6);
  return c.get()[0] == c.get()[0] ? 0 : 1;  // keep the result alive
}
