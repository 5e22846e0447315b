// Every bench_memory kernel described once: its name (the one name every implementation, model derivation and table uses), its family,
// the tensors it reads and writes (in the order the implementations receive them), how
// they are initialised, and from that table alone the two formulas users rely on:
//
//   bytes_moved  = sum over tensors of elements x element size x (reads + writes),
//                  each tensor read and/or written exactly once: the minimum the op must
//                  move. For the STREAM kernels this is STREAM's own convention (copy and
//                  scale count 2 arrays, add and triad 3, no write-allocate traffic).
//   working_set  = sum over tensors of elements x element size (each counted once).
//
// Scratch space an implementation adds (partial sums of the reductions) is not a tensor
// here and is not counted. Closed forms per kernel are in docs/bench_memory.md and unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend/dtype.h"

namespace gpucal::memory {

enum class Kernel {
  copy, scale, add, triad, read,  // STREAM + read-only reduction
  fma_chain,                      // vector throughput
  layernorm_fwd, layernorm_bwd, rmsnorm_fwd, rmsnorm_bwd, softmax_fwd, softmax_bwd, gelu_fwd, gelu_bwd,
  swiglu_fwd, swiglu_bwd, residual_add, dropout_residual_add, cross_entropy_fwd, cross_entropy_bwd, adamw_step
};

enum class Family { stream, vector, op };
// How a point's size is given: elements per array (STREAM: --bytes / element size;
// fma_chain: --fma-elements), rows x cols (--rows, --cols), or a parameter count (--params).
enum class Shape { elements, rows_cols, params };

// The extent of one tensor in terms of the point's dimensions.
enum class Extent {
  n,          // elements (STREAM arrays, fma_chain, AdamW parameters)
  rows_cols,  // rows x cols
  cols,       // one per column (LayerNorm gamma/beta)
  rows,       // one per row (statistics, targets, losses)
  read_slots  // partial sums of `read`: read_slots(n)
};
// Element type of a tensor: the point's dtype, or fixed.
enum class Elem { data, f32, i32, u8 };
enum class Access { read, write, read_write };

struct TensorSpec {
  const char* name;
  Extent extent;
  Elem elem;
  Access access;
  // Inputs: uniform in [lo, hi); i32 targets: integers in [0, cols). Outputs ignore them.
  double lo = 0, hi = 0;
};

struct KernelDesc {
  Kernel id;
  const char* name;
  Family family;
  Shape shape;
  std::vector<TensorSpec> tensors;
  const char* computes;  // one line: what the kernel writes, in docs/bench_memory.md's notation
};

const std::vector<KernelDesc>& kernel_table();
const KernelDesc& kernel_desc(Kernel k);
// Throws UsageError naming the known kernels.
const KernelDesc& find_kernel(const std::string& name);
std::vector<std::string> kernel_names();
// The --kernel word that selects a family's kernels (stream, vector, ops), as `gpucal list
// memory-kernels` names the family; the family a word selects, nullopt for any other word.
std::string_view family_word(Family f);
std::optional<Family> family_of_word(std::string_view word);

// The point's dimensions: n for Shape::elements and Shape::params, rows/cols otherwise.
struct Dims {
  int64_t n = 0, rows = 0, cols = 0;
};

// Partial sums the `read` kernel writes: one per 4096 elements, at least 1, at most 1024
// (a pure function of n, so every implementation and the reference agree).
int64_t read_slots(int64_t n);
// Chunk of elements behind one partial sum: ceil(n / read_slots(n)).
int64_t read_chunk(int64_t n);
int64_t extent_elements(Extent e, const Dims& d);
size_t elem_bytes(Elem e, DType data);
DType elem_dtype(Elem e, DType data);

int64_t bytes_moved(const KernelDesc& k, const Dims& d, DType data);
// bytes_moved in closed form, from the same tensors: n elements, R rows, C cols, s bytes per
// element of the dtype, slots the partial sums of `read`; fixed-type tensors by their own size
// ("2RCs + 2Cs + 8R" for layernorm_fwd). For `gpucal list memory-kernels` and the docs.
std::string bytes_formula(const KernelDesc& k);
int64_t working_set_bytes(const KernelDesc& k, const Dims& d, DType data);
// Elements of the kernel's main operand (n, rows x cols): what "size" means in its tables.
int64_t main_elements(const KernelDesc& k, const Dims& d);

// fma_chain: every element goes through kFmaSteps dependent FMAs x = x * m + c, 2 flop each
// (the multiply and the add, counted whether the hardware fuses them or not).
constexpr int kFmaSteps = 4097;
double fma_chain_flops(int64_t n);

// Which tensors a kernel writes (Access::write or read_write), in table order.
std::vector<int> output_tensors(const KernelDesc& k);

// A STREAM element-wise kernel's operands (core/formulas/stream_ops.h), from its row: x and y
// the first and second tensor it reads (y = -1 when it reads one), out the tensor it writes;
// out is y itself for a read_write y (in place).
struct StreamOperands {
  int x = -1, y = -1, out = -1;
};
StreamOperands stream_operands(const KernelDesc& k);

}  // namespace gpucal::memory
