// The fp64 reference of bench_memory (memory_reference.cpp): known values, and every backward
// pass against central finite differences of its forward pass, computed through the same
// reference on fp64 tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bench_memory/memory_reference.h"

using namespace gpucal;
using namespace gpucal::memory;

namespace {

using Tensors = std::vector<std::vector<double>>;

// Random inputs in each tensor's range, as doubles (i32 targets in [0, cols)).
Tensors make_inputs(const KernelDesc& k, const Dims& d, unsigned seed) {
  std::mt19937_64 rng(seed);
  Tensors t;
  for (const auto& spec : k.tensors) {
    std::vector<double> v(static_cast<size_t>(extent_elements(spec.extent, d)));
    const double hi = spec.elem == Elem::i32 ? static_cast<double>(d.cols) : spec.hi;
    std::uniform_real_distribution<double> u(spec.lo, hi);
    for (auto& x : v) x = spec.elem == Elem::i32 ? std::floor(u(rng)) : u(rng);
    t.push_back(std::move(v));
  }
  return t;
}

// Runs every unit of the reference; returns every tensor with the outputs filled in.
Tensors run(Kernel kernel, const Dims& d, const Scalars& s, Tensors t) {
  const KernelDesc& k = kernel_desc(kernel);
  std::vector<HostView> views;
  for (const auto& v : t) views.emplace_back(v.data(), DType::fp64);
  std::vector<Expected> out;
  for (int64_t u = 0; u < reference_units(k, d); ++u) reference_unit(k, d, s, views, u, out);
  Tensors result = t;
  for (const Expected& e : out) result[static_cast<size_t>(e.tensor)][static_cast<size_t>(e.index)] = e.value;
  return result;
}

// d/dx of L(x) = sum(w * f(x)) at every x[i] by central differences; f writes tensor `out`.
double fd(Kernel fwd, const Dims& d, const Scalars& s, Tensors t, int in, size_t i, int out, const std::vector<double>& w) {
  const double h = 1e-6;
  auto loss = [&](double delta) {
    Tensors u = t;
    u[static_cast<size_t>(in)][i] += delta;
    const Tensors r = run(fwd, d, s, u);
    double l = 0;
    for (size_t j = 0; j < w.size(); ++j) l += w[j] * r[static_cast<size_t>(out)][j];
    return l;
  };
  return (loss(h) - loss(-h)) / (2 * h);
}

}  // namespace

TEST(MemoryReference, KnownValues) {
  const Dims d{4, 0, 0};
  Scalars s;
  Tensors t = {{1.0, -1.0, 0.0, 2.0}, {0, 0, 0, 0}};
  EXPECT_NEAR(run(Kernel::gelu_fwd, Dims{0, 1, 4}, s, t)[1][0], 0.8413447460685429, 1e-15);  // Phi(1)
  EXPECT_NEAR(run(Kernel::gelu_fwd, Dims{0, 1, 4}, s, t)[1][1], -0.15865525393145707, 1e-15);
  EXPECT_DOUBLE_EQ(run(Kernel::scale, d, s, t)[1][3], 6.0);  // q = 3
  // fma_chain's closed form against the iteration, for a chain that is not exact.
  s.fma_m = 0.5f, s.fma_c = 0.25f, s.fma_steps = 7;
  double x = 2.0;
  for (int k = 0; k < 7; ++k) x = x * 0.5 + 0.25;
  EXPECT_NEAR(run(Kernel::fma_chain, d, s, t)[1][3], x, 1e-15);
  // Softmax of a row sums to 1; cross-entropy of equal logits is log(vocab).
  const Dims row{0, 1, 5};
  Tensors sm = {{0.1, -2, 3, 0.5, 1}, std::vector<double>(5)};
  const Tensors y = run(Kernel::softmax_fwd, row, s, sm);
  double sum = 0;
  for (double v : y[1]) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-15);
  Tensors ce = {{2, 2, 2, 2, 2}, {3}, {0}, {0}};
  const Tensors ce_out = run(Kernel::cross_entropy_fwd, row, s, ce);
  EXPECT_NEAR(ce_out[2][0], std::log(5.0), 1e-14);
  EXPECT_NEAR(ce_out[3][0], 2 + std::log(5.0), 1e-14);
}

TEST(MemoryReference, LayerNormForwardByHand) {
  // x = (1, 2, 3, 4): mean 2.5, var 1.25.
  Scalars s;
  s.norm_eps = 0;
  Tensors t = {{1, 2, 3, 4}, {1, 1, 2, 1}, {0, 0, 1, 0}, std::vector<double>(4), {0}, {0}};
  const Tensors r = run(Kernel::layernorm_fwd, Dims{0, 1, 4}, s, t);
  const double rstd = 1 / std::sqrt(1.25);
  EXPECT_NEAR(r[3][0], -1.5 * rstd, 1e-15);
  EXPECT_NEAR(r[3][2], 0.5 * rstd * 2 + 1, 1e-15);
  EXPECT_DOUBLE_EQ(r[4][0], 2.5);
  EXPECT_NEAR(r[5][0], rstd, 1e-15);
}

TEST(MemoryReference, AdamWMatchesTorchsUpdate) {
  Scalars s;
  Tensors t = {{0.5}, {0.2}, {0.05}, {0.02}};
  const Tensors r = run(Kernel::adamw_step, Dims{1, 0, 0}, s, t);
  const double b1 = s.beta1, b2 = s.beta2, lr = s.lr;
  const double m = b1 * 0.05 + (1 - b1) * 0.2, v = b2 * 0.02 + (1 - b2) * 0.04;
  const double bc1 = 1 - std::pow(b1, 10), bc2 = 1 - std::pow(b2, 10);
  const double p = 0.5 * (1 - lr * s.weight_decay) - lr / bc1 * m / (std::sqrt(v) / std::sqrt(bc2) + s.adam_eps);
  EXPECT_NEAR(r[0][0], p, 1e-12);
  EXPECT_NEAR(r[2][0], m, 1e-15);
  EXPECT_NEAR(r[3][0], v, 1e-15);
}

// Backward = derivative of the forward: sum(w * forward) differentiated numerically.
TEST(MemoryReference, ElementwiseBackwardsAreDerivatives) {
  const Dims d{0, 2, 3};
  Scalars s;
  Tensors g = make_inputs(kernel_desc(Kernel::gelu_bwd), d, 1);  // x, dy, dx
  const Tensors gb = run(Kernel::gelu_bwd, d, s, g);
  Tensors sw = make_inputs(kernel_desc(Kernel::swiglu_bwd), d, 2);  // a, b, dy, da, db
  const Tensors swb = run(Kernel::swiglu_bwd, d, s, sw);
  for (size_t i = 0; i < 6; ++i) {
    std::vector<double> w(6, 0.0);
    w[i] = g[1][i];
    EXPECT_NEAR(gb[2][i], fd(Kernel::gelu_fwd, d, s, {g[0], std::vector<double>(6)}, 0, i, 1, w), 1e-7);
    w[i] = sw[2][i];
    const Tensors fwd_in = {sw[0], sw[1], std::vector<double>(6)};
    EXPECT_NEAR(swb[3][i], fd(Kernel::swiglu_fwd, d, s, fwd_in, 0, i, 2, w), 1e-7);
    EXPECT_NEAR(swb[4][i], fd(Kernel::swiglu_fwd, d, s, fwd_in, 1, i, 2, w), 1e-7);
  }
}

TEST(MemoryReference, RowBackwardsAreDerivatives) {
  const Dims d{0, 3, 5};
  const size_t rc = 15;
  Scalars s;
  // Softmax: dx from (y, dy) equals d/dx sum(dy * softmax(x)).
  Tensors sx = make_inputs(kernel_desc(Kernel::softmax_fwd), d, 3);
  const Tensors sy = run(Kernel::softmax_fwd, d, s, sx);
  Tensors sb = make_inputs(kernel_desc(Kernel::softmax_bwd), d, 4);
  sb[0] = sy[1];
  const Tensors sbo = run(Kernel::softmax_bwd, d, s, sb);
  for (size_t i = 0; i < rc; ++i) EXPECT_NEAR(sbo[2][i], fd(Kernel::softmax_fwd, d, s, sx, 0, i, 1, sb[1]), 1e-7);

  // LayerNorm and RMSNorm: dx, dgamma (and dbeta) with the forward's own statistics.
  for (bool layer : {true, false}) {
    const Kernel fwd = layer ? Kernel::layernorm_fwd : Kernel::rmsnorm_fwd;
    const Kernel bwd = layer ? Kernel::layernorm_bwd : Kernel::rmsnorm_bwd;
    Tensors in = make_inputs(kernel_desc(fwd), d, 5);
    const Tensors out = run(fwd, d, s, in);
    const std::vector<double> dy = make_inputs(kernel_desc(Kernel::gelu_fwd), d, 6)[0];
    const int y = layer ? 3 : 2;
    Tensors b = layer ? Tensors{dy, in[0], in[1], out[4], out[5], std::vector<double>(rc), std::vector<double>(5),
                                std::vector<double>(5)}
                      : Tensors{dy, in[0], in[1], out[3], std::vector<double>(rc), std::vector<double>(5)};
    const Tensors g = run(bwd, d, s, b);
    for (size_t i = 0; i < rc; ++i) EXPECT_NEAR(g[layer ? 5 : 4][i], fd(fwd, d, s, in, 0, i, y, dy), 1e-6) << layer;
    for (size_t j = 0; j < 5; ++j) {
      EXPECT_NEAR(g[layer ? 6 : 5][j], fd(fwd, d, s, in, 1, j, y, dy), 1e-6) << layer;
      if (layer) EXPECT_NEAR(g[7][j], fd(fwd, d, s, in, 2, j, y, dy), 1e-6);
    }
  }

  // Cross-entropy: the gradient of the mean loss over rows.
  Tensors ce = make_inputs(kernel_desc(Kernel::cross_entropy_fwd), d, 7);
  const Tensors cf = run(Kernel::cross_entropy_fwd, d, s, ce);
  Tensors cb = {ce[0], ce[1], cf[3], std::vector<double>(rc)};
  const Tensors cg = run(Kernel::cross_entropy_bwd, d, s, cb);
  const std::vector<double> mean_weights(3, 1.0 / 3);
  for (size_t i = 0; i < rc; ++i) EXPECT_NEAR(cg[3][i], fd(Kernel::cross_entropy_fwd, d, s, ce, 0, i, 2, mean_weights), 1e-7);
}
