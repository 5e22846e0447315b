// Every operation ONE training step runs on ONE rank, derived from a model and a layout:
// GEMMs (forward, data-gradient, weight-gradient), attention (forward, backward), the
// memory-bound ops (bench_memory's kernels), the optimizer, and every message (TP, DP, ZeRO-3,
// PP, CP, EP). Each op names the bench that measures it, its role in the step and how many
// times a step runs it, so that a step time is sum(op time x calls_per_step) over the ops:
// this list is what `gpucal predict` sums, and what the benches run with --model.
//
// GEMMs are in bench_gemm's column-major BLAS terms, as Transformer Engine and Megatron call
// cuBLAS for a linear layer Y[T x out] = X[T x in] . W^T (W stored [out x in], row-major):
//   forward  Y^T  = W^T . X^T     layout TN, m = out, n = T,   k = in
//   dgrad    dX^T = W . dY^T      layout NN, m = in,  n = T,   k = out
//   wgrad    dW^T = X^T . dY      layout NT, m = in,  n = out, k = T; beta = 1 into an fp32
//                                 main gradient (Megatron's gradient-accumulation fusion)
// where T is the tokens the layer sees on this rank (micro_batch x seq / cp; the full T
// after the sequence-parallel all-gather).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/backend/dtype.h"
#include "core/model/layout.h"
#include "core/model/model_spec.h"

namespace gpucal::model {

enum class OpKind { gemm, attention, memory, collective, p2p };

struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;  // batch > 1: the uniform grouped GEMM of an MoE's local experts
  std::string layout = "TN";
  double beta = 0;
  DType out_dtype = DType::fp32;
  // fp8 GEMMs only, as Transformer Engine runs them on Hopper: "fast" (the forward GEMM, FP8's
  // own accumulator) or "split" (dgrad and wgrad, promoted to FP32 every few steps of k; TE's
  // _2X_ACC_DGRAD/_2X_ACC_WGRAD). Empty: not an fp8 GEMM. Not a shape cell: rows do not record it.
  std::string accumulation;
};

struct AttentionShape {
  int64_t batch = 1, heads = 1, kv_heads = 1, seq_q = 1, seq_kv = 1, head_dim = 1;
  bool causal = false;
  std::string pass = "fwd";  // fwd | bwd
};

// bench_memory's kernels (names from core/formulas/kernel_table.h): rows x cols for the row-wise kernels
// (norms, softmax, activations, residuals, cross-entropy; cols is the output width), params
// for adamw_step, bytes (and params) for the read of the gradient norm.
struct MemoryShape {
  std::string kernel;
  int64_t rows = 0, cols = 0, params = 0, bytes = 0;
};

// A message. collective: allreduce | allgather | reduce_scatter | alltoall (bench_collectives,
// size_bytes as nccl-tests defines S: allgather's output, reduce_scatter's input, alltoall's
// send buffer per rank); p2p: sendrecv (a pipeline neighbour) | ring (context-parallel KV
// exchange), size_bytes per message (bench_p2p).
struct CommShape {
  std::string collective;
  std::string group;  // tp | dp (dp x cp ranks) | expert_dp | ep | pp | cp | embedding
  int64_t group_size = 1;
  int64_t size_bytes = 0;
  bool in_place = false;
};

struct ModelOp {
  OpKind kind = OpKind::gemm;
  std::string role;  // qkv_fwd, mlp_down_wgrad, tp_allreduce_fwd, dp_reducescatter_grad, ...
  int64_t calls_per_step = 0;
  DType dtype = DType::bf16;  // inputs (gemm, attention, memory) or elements (messages)
  GemmShape gemm;
  AttentionShape attention;
  MemoryShape memory;
  CommShape comm;

  // The bench that measures it: gemm | attention | memory | collectives | p2p.
  std::string bench() const;
  // Work of one call: 2mnk x batch (gemm), the fa2 convention (attention, backward 2.5x),
  // 0 otherwise.
  double flops() const;
  // The row cells that identify this op's measurement in its bench's CSV (the shape and
  // dtype, never the role): ops with equal cells are one measurement.
  std::vector<std::pair<std::string, std::string>> shape_cells() const;
  // The same cells, each given to `cell` in turn (no list built: a cache key's hot path).
  void visit_shape_cells(const std::function<void(std::string_view, std::string_view)>& cell) const;
  // "m=1280 n=8192 k=8192 batch=1 layout=TN" etc.: for --list and messages.
  std::string shape_text() const;
};

struct Workload {
  ModelSpec model;  // as run (after --scale and --layers)
  ParallelLayout layout;
  StepFacts facts;
  std::vector<ModelOp> ops;
  // Parameters this rank holds (its TP/PP/EP shard, before ZeRO sharding).
  int64_t dense_params = 0, expert_params = 0;
  std::vector<std::string> notes;  // approximations and what is left out, one line each
};

// Validates (UsageError) and derives the whole step.
Workload derive_workload(const ModelSpec& model, const ParallelLayout& layout);

// Ops with equal shape cells in one bench, merged: roles joined by '+' in derivation order,
// calls summed. One measurement per group; its time x calls_per_step is its share of the step.
struct OpGroup {
  ModelOp op;  // the first op of the group, with role and calls_per_step of the whole group
  std::vector<std::string> roles;
};
std::vector<OpGroup> group_ops(const std::vector<ModelOp>& ops, const std::string& bench);

nlohmann::json to_json(const ModelOp& op);
nlohmann::json to_json(const Workload& w);

// Pieces the derivations share (derive_compute.cpp, derive_comm.cpp).
namespace detail {
void add_compute_ops(Workload& w);
void add_memory_ops(Workload& w);
void add_comm_ops(Workload& w);
// Parameters of one layer on this rank, split by how their gradients are reduced.
struct LayerParams {
  int64_t dense = 0;  // reduced over dp x cp (includes sp_allreduced)
  // Whole on every tp rank and fed by the rank's sequence shard under sp (norms, row-parallel
  // biases, the router): with sp their gradients are all-reduced over tp first (Megatron's
  // _allreduce_layernorm_grads, the `sequence_parallel` parameter attribute).
  int64_t sp_allreduced = 0;
  int64_t expert = 0;  // routed experts' weights, reduced over dp x cp / ep
};
LayerParams layer_params(const ModelSpec& m, const ParallelLayout& l, const StepFacts& f, int64_t layer);
// Embedding, position table, final norm, logits held by this stage.
LayerParams stage_extra_params(const ModelSpec& m, const ParallelLayout& l, const StepFacts& f);
}  // namespace detail

}  // namespace gpucal::model
