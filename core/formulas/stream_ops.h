// The per-element formulas of the STREAM family's element-wise kernels, one functor each,
// written once for the host loops (bench_memory/stream_host.cpp), the CUDA/HIP kernel
// (bench_memory/gpu_stream.cuh) and the fp64 reference (bench_memory/memory_reference.cpp):
// out[i] = op(x[i], y[i], q) with x, y and out the tensors of the kernel's row
// (stream_operands in kernel_table.h) and q = Scalars::q. Arithmetic in the caller's type:
// fp32 in the kernels, fp64 in the reference. The reference checks the loops around the
// formula (vectors, tails, storage conversions, in-place access), not the one-line formula,
// which its unit test checks by hand (tests/memory/test_memory_formulas.cpp).
//
// A new STREAM element-wise kernel: its functor here, listed in StreamOps, its Kernel id and
// its row in core/formulas/kernel_table.cpp. copy (bits moved unchanged) and read (a
// reduction) are STREAM kernels without a functor.
#pragma once

#include "core/backend/element_convert.h"
#include "core/formulas/kernel_table.h"

namespace gpucal::memory {

// Each functor: its kernel, how many tensors it reads (1: x; 2: x and y), its formula.
struct ScaleOp {
  static constexpr Kernel id = Kernel::scale;
  static constexpr int inputs = 1;
  template <typename T>
  GPUCAL_HD T operator()(T x, T, T q) const { return q * x; }
};
struct AddOp {
  static constexpr Kernel id = Kernel::add;
  static constexpr int inputs = 2;
  template <typename T>
  GPUCAL_HD T operator()(T x, T y, T) const { return x + y; }
};
struct TriadOp {
  static constexpr Kernel id = Kernel::triad;
  static constexpr int inputs = 2;
  template <typename T>
  GPUCAL_HD T operator()(T x, T y, T q) const { return x + q * y; }
};

template <typename... Ops>
struct OpList {};
using StreamOps = OpList<ScaleOp, AddOp, TriadOp>;

template <typename F, typename... Ops>
bool visit_stream_op(Kernel k, F& f, OpList<Ops...>) {
  return ((k == Ops::id && (f(Ops{}), true)) || ...);
}
// Calls f(Op{}) with kernel k's functor; false when k has none.
template <typename F>
bool with_stream_op(Kernel k, F&& f) {
  return visit_stream_op(k, f, StreamOps{});
}

}  // namespace gpucal::memory
