// cuDNN 9 fused SDPA through the backend graph API. The operation graphs mirror what
// cudnn-frontend's CompositeSDPANode / CompositeSDPABackwardNode expand to (cuDNN < 9.21 path):
// the fused attention engines are found by matching that pattern, so op order, virtual-ness and
// data types follow it closely. Tensors use cuDNN's [b, h, s, d] dimension order; BSHD vs BHSD
// is only a matter of strides.
#include "bench_attention/attention_cudnn.h"

#include <chrono>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/backend/gpu_runtime.h"

namespace gpucal::attention {
namespace {

// UIDs of the tensors the variant pack binds. Virtual tensors count up from kFirstVirtualUid.
enum TensorUid : int64_t {
  kUidQ = 1,
  kUidK,  // bound as K^T: [b, h_kv, d, s_kv] by stride swap, same memory
  kUidV,  // forward: V; backward: V^T by stride swap
  kUidO,
  kUidStats,  // lse, fp32 [b, h, s_q, 1]
  kUidDO,
  kUidDQ,
  kUidDK,
  kUidDV,
  kUidAttnScale,  // by-value host scalars
  kUidNegInf,
  kUidOne,
  kUidRowDotDoO,  // backward scratch in our workspace: rowsum(dO * O), fp32 [b, h, s_q, 1]
  kUidDqAccum,    // backward scratch in our workspace: dQ accumulated in fp32, [b, h, s_q, d]
};
constexpr int64_t kFirstVirtualUid = 100;
constexpr size_t kWorkspaceAlignment = 256;

size_t align_up(size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

const char* dtype_name(AttnDtype dtype) {
  switch (dtype) {
    case AttnDtype::fp16:
      return "fp16";
    case AttnDtype::bf16:
      return "bf16";
    case AttnDtype::fp32:
      return "fp32";
    case AttnDtype::fp8_e4m3:
      return "fp8_e4m3";
  }
  return "unknown";
}

// One line naming the problem, prefixed to every failure so a skip says what was skipped.
std::string describe(const AttentionParams& p, CudnnSdpa::Pass pass) {
  std::ostringstream text;
  text << "cuDNN SDPA " << (pass == CudnnSdpa::Pass::fwd ? "fwd" : "bwd") << " " << dtype_name(p.dtype) << " "
       << (p.layout == AttnLayout::BSHD ? "BSHD" : "BHSD") << " b=" << p.batch << " h=" << p.heads
       << " h_kv=" << p.kv_heads << " s_q=" << p.seq_q << " s_kv=" << p.seq_kv << " d=" << p.head_dim
       << (p.causal ? " causal" : "");
  return text.str();
}

int64_t runtime_cudnn_version() {
  return static_cast<int64_t>(cudnnGetVersion());
}

// Rejects, with a one-line reason, what cuDNN's fused SDPA engines are documented not to run
// (the same checks cudnn-frontend makes before building), and shapes that make no sense.
cudnnDataType_t check_supported(const AttentionParams& p, CudnnSdpa::Pass pass) {
  const std::string what = describe(p, pass);
  if (p.batch <= 0 || p.heads <= 0 || p.kv_heads <= 0 || p.seq_q <= 0 || p.seq_kv <= 0 || p.head_dim <= 0)
    throw std::runtime_error(what + ": every dimension must be positive");
  if (p.heads % p.kv_heads != 0) throw std::runtime_error(what + ": heads must be a multiple of kv_heads");
  if (p.dtype == AttnDtype::fp8_e4m3) throw CudnnUnsupported("fp8 SDPA not implemented");
  if (p.dtype == AttnDtype::fp32) throw CudnnUnsupported(what + ": cuDNN fused SDPA takes fp16/bf16 only");
  if (p.head_dim % 8 != 0 || p.head_dim > 256)
    throw CudnnUnsupported(what + ": head_dim must be a multiple of 8 and at most 256");
  const int64_t version = runtime_cudnn_version();
  if (pass == CudnnSdpa::Pass::bwd) {
    if (p.seq_q == 1 && p.seq_kv == 1)
      throw CudnnUnsupported(what + ": s_q = s_kv = 1 has no backward engine");
    if (version == 91000 || version == 91001)
      throw CudnnUnsupported(what + ": cuDNN 9.10.0/9.10.1 SDPA backward has known bugs");
    // Up to 9.15 the backward needs a padding mask with full lengths when s_kv % 128 != 0
    // (cudnn-frontend adds one); not built here.
    if (version <= 91500 && p.seq_kv % 128 != 0)
      throw CudnnUnsupported(what + ": cuDNN <= 9.15 backward needs s_kv % 128 == 0 without a padding mask");
  }
  return p.dtype == AttnDtype::fp16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
}

// Dims and strides of every tensor of one problem, in cuDNN's [b, h, s, d] order.
struct SdpaShapes {
  std::vector<int64_t> q_dims, q_strides;              // Q, O, dO, dQ
  std::vector<int64_t> kv_dims, kv_strides;            // K, V, dK, dV
  std::vector<int64_t> kvt_dims, kvt_strides;          // K^T, V^T: [b, h_kv, d, s_kv], same memory
  std::vector<int64_t> q_packed_strides;               // fp32 scratch shaped like Q, packed BHSD
  std::vector<int64_t> score_dims, score_strides;      // [b, h, s_q, s_kv], virtual
  std::vector<int64_t> score_t_dims, score_t_strides;  // the same memory viewed as [b, h, s_kv, s_q]
  std::vector<int64_t> row_dims, row_strides;          // per-row statistics [b, h, s_q, 1]
};

SdpaShapes make_shapes(const AttentionParams& p) {
  const int64_t b = p.batch, h = p.heads, h_kv = p.kv_heads, s_q = p.seq_q, s_kv = p.seq_kv, d = p.head_dim;
  const auto qs = p.strides(h, s_q);
  const auto ks = p.strides(h_kv, s_kv);
  SdpaShapes s;
  s.q_dims = {b, h, s_q, d};
  s.q_strides = {qs.batch, qs.head, qs.seq, qs.dim};
  s.kv_dims = {b, h_kv, s_kv, d};
  s.kv_strides = {ks.batch, ks.head, ks.seq, ks.dim};
  s.kvt_dims = {b, h_kv, d, s_kv};
  s.kvt_strides = {ks.batch, ks.head, ks.dim, ks.seq};
  s.q_packed_strides = {h * s_q * d, s_q * d, d, 1};
  s.score_dims = {b, h, s_q, s_kv};
  s.score_strides = {h * s_q * s_kv, s_q * s_kv, s_kv, 1};
  s.score_t_dims = {b, h, s_kv, s_q};
  s.score_t_strides = {h * s_q * s_kv, s_q * s_kv, 1, s_kv};
  s.row_dims = {b, h, s_q, 1};
  s.row_strides = {h * s_q, s_q, 1, 1};
  return s;
}

// Top-left causal mask: keep score[i][j] where row i >= column j, else -inf.
GraphTensor add_top_left_causal_mask(OperationGraphBuilder& g, const GraphTensor& scores,
                                     const GraphTensor& neg_inf) {
  GraphTensor row = g.virtual_like(scores, CUDNN_DATA_INT32);
  g.add_pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr, row, 2);
  GraphTensor col = g.virtual_like(scores, CUDNN_DATA_INT32);
  g.add_pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, scores, nullptr, nullptr, col, 3);
  GraphTensor keep = g.virtual_like(scores, CUDNN_DATA_BOOLEAN);
  g.add_pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, &col, nullptr, keep);
  GraphTensor masked = g.virtual_like(scores, CUDNN_DATA_FLOAT);
  g.add_pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, scores, &neg_inf, &keep,
                  masked);  // keep ? x : b
  return masked;
}

void build_forward_ops(OperationGraphBuilder& g, const SdpaShapes& s, cudnnDataType_t io, bool causal) {
  const GraphTensor q = g.tensor(kUidQ, s.q_dims, s.q_strides, io);
  const GraphTensor k_t = g.tensor(kUidK, s.kvt_dims, s.kvt_strides, io);
  const GraphTensor v = g.tensor(kUidV, s.kv_dims, s.kv_strides, io);
  const GraphTensor o = g.tensor(kUidO, s.q_dims, s.q_strides, io);
  const GraphTensor lse = g.tensor(kUidStats, s.row_dims, s.row_strides, CUDNN_DATA_FLOAT);
  const GraphTensor attn_scale = g.scalar(kUidAttnScale, CUDNN_DATA_FLOAT);

  // S = scale * Q K^T (K^T has h_kv heads: GQA broadcasts over the head dimension)
  GraphTensor scores = g.virtual_tensor(s.score_dims, s.score_strides, CUDNN_DATA_FLOAT);
  g.add_matmul(q, k_t, scores);
  GraphTensor logits = g.binary(CUDNN_POINTWISE_MUL, scores, attn_scale);
  if (causal) logits = add_top_left_causal_mask(g, logits, g.scalar(kUidNegInf, CUDNN_DATA_FLOAT));

  // Softmax as max / sub / exp / sum / div; lse = max + log(sum) is kept for the backward.
  GraphTensor row_max = g.virtual_tensor(s.row_dims, s.row_strides, CUDNN_DATA_FLOAT);
  g.add_reduction(CUDNN_REDUCE_TENSOR_MAX, logits, row_max);
  GraphTensor exps = g.unary(CUDNN_POINTWISE_EXP, g.binary(CUDNN_POINTWISE_SUB, logits, row_max));
  GraphTensor row_sum = g.virtual_tensor(s.row_dims, s.row_strides, CUDNN_DATA_FLOAT);
  g.add_reduction(CUDNN_REDUCE_TENSOR_ADD, exps, row_sum);
  GraphTensor log_sum = g.unary(CUDNN_POINTWISE_LOG, row_sum);
  g.add_pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, row_max, &log_sum, nullptr, lse);
  // P enters the second matmul in the I/O type, as the fused engine expects.
  GraphTensor probs = g.virtual_like(exps, io);
  g.add_pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, exps, &row_sum, nullptr, probs);

  g.add_matmul(probs, v, o);  // O = P V
}

// out = a b, where out has kv_heads heads. For GQA/MQA the per-query-head product is summed over
// each group of query heads sharing one K/V head.
void add_matmul_into_kv_heads(OperationGraphBuilder& g, const GraphTensor& a, const GraphTensor& b,
                              const GraphTensor& out, int64_t heads) {
  if (out.dims[1] == heads) {
    g.add_matmul(a, b, out);
    return;
  }
  const int64_t rows = out.dims[2], cols = out.dims[3];
  GraphTensor per_query_head = g.virtual_tensor({out.dims[0], heads, rows, cols},
                                                {heads * rows * cols, rows * cols, cols, 1}, out.data_type);
  g.add_matmul(a, b, per_query_head);
  g.add_reduction(CUDNN_REDUCE_TENSOR_ADD, per_query_head, out);
}

void build_backward_ops(OperationGraphBuilder& g, const SdpaShapes& s, cudnnDataType_t io, bool causal) {
  const int64_t heads = s.q_dims[1];
  const GraphTensor q = g.tensor(kUidQ, s.q_dims, s.q_strides, io);
  const GraphTensor k_t = g.tensor(kUidK, s.kvt_dims, s.kvt_strides, io);
  const GraphTensor v_t = g.tensor(kUidV, s.kvt_dims, s.kvt_strides, io);
  const GraphTensor o = g.tensor(kUidO, s.q_dims, s.q_strides, io);
  const GraphTensor d_o = g.tensor(kUidDO, s.q_dims, s.q_strides, io);
  const GraphTensor lse = g.tensor(kUidStats, s.row_dims, s.row_strides, CUDNN_DATA_FLOAT);
  const GraphTensor dq = g.tensor(kUidDQ, s.q_dims, s.q_strides, io);
  const GraphTensor dk = g.tensor(kUidDK, s.kv_dims, s.kv_strides, io);
  const GraphTensor dv = g.tensor(kUidDV, s.kv_dims, s.kv_strides, io);
  const GraphTensor attn_scale = g.scalar(kUidAttnScale, CUDNN_DATA_FLOAT);
  const GraphTensor one = g.scalar(kUidOne, CUDNN_DATA_FLOAT);
  const GraphTensor row_dot_do_o = g.tensor(kUidRowDotDoO, s.row_dims, s.row_strides, CUDNN_DATA_FLOAT);
  const GraphTensor dq_accum = g.tensor(kUidDqAccum, s.q_dims, s.q_packed_strides, CUDNN_DATA_FLOAT);

  // D = rowsum(dO * O), materialized (the engine reads it per tile). The "* 1" is the frontend's
  // dropout-scale slot; it is kept so the graph matches the engine's pattern.
  GraphTensor do_times_o = g.virtual_tensor(s.q_dims, s.q_packed_strides, CUDNN_DATA_FLOAT);
  g.add_pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, d_o, &o, nullptr, do_times_o);
  GraphTensor row_sum = g.virtual_tensor(s.row_dims, s.row_strides, CUDNN_DATA_FLOAT);
  g.add_reduction(CUDNN_REDUCE_TENSOR_ADD, do_times_o, row_sum);
  g.add_pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, row_sum, &one, nullptr, row_dot_do_o);

  // P = exp(scale * Q K^T - lse), recomputed from the forward's statistics.
  GraphTensor scores = g.virtual_tensor(s.score_dims, s.score_strides, CUDNN_DATA_FLOAT);
  g.add_matmul(q, k_t, scores);
  GraphTensor shifted = g.binary(CUDNN_POINTWISE_SUB, g.binary(CUDNN_POINTWISE_MUL, scores, attn_scale), lse);
  if (causal) shifted = add_top_left_causal_mask(g, shifted, g.scalar(kUidNegInf, CUDNN_DATA_FLOAT));
  const GraphTensor probs = g.unary(CUDNN_POINTWISE_EXP, shifted);

  // dV = P^T dO
  GraphTensor probs_t = g.virtual_tensor(s.score_t_dims, s.score_t_strides, io);
  g.add_reshape(probs, probs_t);
  add_matmul_into_kv_heads(g, probs_t, d_o, dv, heads);

  // dS = scale * P * (dO V^T - D)
  GraphTensor dp = g.virtual_tensor(s.score_dims, s.score_strides, CUDNN_DATA_FLOAT);
  g.add_matmul(d_o, v_t, dp);
  GraphTensor ds_unscaled =
      g.binary(CUDNN_POINTWISE_MUL, g.binary(CUDNN_POINTWISE_SUB, dp, row_dot_do_o), probs);
  const GraphTensor ds = g.binary(CUDNN_POINTWISE_MUL, ds_unscaled, attn_scale);

  // dK = dS^T Q
  GraphTensor ds_t = g.virtual_tensor(s.score_t_dims, s.score_t_strides, io);
  g.add_reshape(ds, ds_t);
  add_matmul_into_kv_heads(g, ds_t, q, dk, heads);

  // dQ = dS K, accumulated in fp32 scratch, then converted to the I/O type.
  GraphTensor k = g.virtual_tensor(s.kv_dims, s.kv_strides, io);
  g.add_reshape(k_t, k);
  g.add_matmul(ds, k, dq_accum);
  g.add_pointwise(CUDNN_POINTWISE_IDENTITY, CUDNN_DATA_FLOAT, dq_accum, nullptr, nullptr, dq);
}

}  // namespace

struct CudnnSdpa::Impl {
  cudnnHandle_t handle = nullptr;
  AttentionParams params;
  Pass pass = Pass::fwd;
  OperationGraphBuilder graph_builder{kFirstVirtualUid};  // owns tensor and operation descriptors
  BackendDescriptor operation_graph;
  ExecutionPlan plan;
  double build_ms = 0;
  // Workspace: [plan workspace][rowsum(dO*O)][dQ fp32 accumulator] (the last two backward only).
  size_t row_dot_offset = 0;
  size_t dq_accum_offset = 0;
  size_t dq_accum_bytes = 0;
  size_t workspace_bytes = 0;
  bool zero_dq_accum = false;  // cuDNN < 9.6 expects the accumulator zeroed by the caller
  // By-value scalars: the variant pack holds their host addresses, so they live here, on the heap.
  float attn_scale = 1.f;
  float neg_inf = -std::numeric_limits<float>::infinity();
  float one = 1.f;
  // The last variant pack, reused while the caller passes the same pointers (keeps host work
  // out of timed loops).
  mutable std::vector<void*> packed_pointers;
  mutable void* packed_workspace = nullptr;
  mutable BackendDescriptor variant_pack;

  void execute(const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace,
               cudaStream_t stream) const {
    if (!variant_pack || pointers != packed_pointers || workspace != packed_workspace) {
      variant_pack = make_variant_pack(uids, pointers, workspace);
      packed_pointers = pointers;
      packed_workspace = workspace;
    }
    CUDNN_CHECK(cudnnSetStream(handle, stream));
    CUDNN_CHECK(cudnnBackendExecute(handle, plan.plan.get(), variant_pack.get()));
  }
};

CudnnSdpa::CudnnSdpa(cudnnHandle_t handle, const AttentionParams& p, Pass pass)
    : impl_(std::make_unique<Impl>()) {
  const auto start = std::chrono::steady_clock::now();
  const cudnnDataType_t io = check_supported(p, pass);
  Impl& s = *impl_;
  s.handle = handle;
  s.params = p;
  s.pass = pass;
  s.attn_scale = p.softmax_scale();
  // Older cuDNN prefers the lowest finite value as the masked score (as cudnn-frontend does).
  if (runtime_cudnn_version() < 91000) s.neg_inf = std::numeric_limits<float>::lowest();

  const std::string what = describe(p, pass);
  try {
    const SdpaShapes shapes = make_shapes(p);
    if (pass == Pass::fwd)
      build_forward_ops(s.graph_builder, shapes, io, p.causal);
    else
      build_backward_ops(s.graph_builder, shapes, io, p.causal);
    s.operation_graph = s.graph_builder.build(handle);
  } catch (const CudnnError& e) {
    if (e.is_not_supported()) throw CudnnUnsupported(what + ": operation graph not supported: " + e.what());
    throw CudnnError(e.status(), what + ": " + e.what());
  }
  try {
    s.plan = build_first_supported_plan(handle, s.operation_graph);
  } catch (const CudnnUnsupported& e) {
    throw CudnnUnsupported(what + ": " + e.what());
  }

  s.workspace_bytes = align_up(static_cast<size_t>(s.plan.workspace_bytes));
  if (pass == Pass::bwd) {
    s.row_dot_offset = s.workspace_bytes;
    s.workspace_bytes += align_up(static_cast<size_t>(p.lse_elems()) * sizeof(float));
    s.dq_accum_offset = s.workspace_bytes;
    s.dq_accum_bytes = static_cast<size_t>(p.q_elems()) * sizeof(float);
    s.workspace_bytes += align_up(s.dq_accum_bytes);
    s.zero_dq_accum = runtime_cudnn_version() < 90600;
  }
  s.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

CudnnSdpa::~CudnnSdpa() = default;
CudnnSdpa::CudnnSdpa(CudnnSdpa&&) noexcept = default;
CudnnSdpa& CudnnSdpa::operator=(CudnnSdpa&&) noexcept = default;

double CudnnSdpa::build_ms() const {
  return impl_->build_ms;
}
size_t CudnnSdpa::workspace_bytes() const {
  return impl_->workspace_bytes;
}
std::string CudnnSdpa::engine_description() const {
  return impl_->plan.description;
}

void CudnnSdpa::forward(const void* q, const void* k, const void* v, void* o, float* lse, void* workspace,
                        cudaStream_t stream) const {
  const Impl& s = *impl_;
  if (s.pass != Pass::fwd) throw std::runtime_error("CudnnSdpa::forward called on a backward plan");
  if (workspace == nullptr && s.workspace_bytes > 0)
    throw std::runtime_error("CudnnSdpa::forward needs workspace_bytes() of workspace");
  std::vector<int64_t> uids = {kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidAttnScale};
  std::vector<void*> pointers = {const_cast<void*>(q),
                                 const_cast<void*>(k),
                                 const_cast<void*>(v),
                                 o,
                                 lse,
                                 const_cast<float*>(&s.attn_scale)};
  if (s.params.causal) {
    uids.push_back(kUidNegInf);
    pointers.push_back(const_cast<float*>(&s.neg_inf));
  }
  s.execute(uids, pointers, workspace, stream);
}

void CudnnSdpa::backward(const void* q, const void* k, const void* v, const void* o, const void* d_o,
                         const float* lse, void* dq, void* dk, void* dv, void* workspace,
                         cudaStream_t stream) const {
  const Impl& s = *impl_;
  if (s.pass != Pass::bwd) throw std::runtime_error("CudnnSdpa::backward called on a forward plan");
  if (workspace == nullptr)
    throw std::runtime_error("CudnnSdpa::backward needs its workspace (scratch lives there)");
  char* scratch = static_cast<char*>(workspace);
  void* dq_accum = scratch + s.dq_accum_offset;
  if (s.zero_dq_accum) GPU_CHECK(cudaMemsetAsync(dq_accum, 0, s.dq_accum_bytes, stream));
  std::vector<int64_t> uids = {kUidQ,  kUidK,  kUidV,         kUidO,   kUidDO,        kUidStats,  kUidDQ,
                               kUidDK, kUidDV, kUidAttnScale, kUidOne, kUidRowDotDoO, kUidDqAccum};
  std::vector<void*> pointers = {const_cast<void*>(q),
                                 const_cast<void*>(k),
                                 const_cast<void*>(v),
                                 const_cast<void*>(o),
                                 const_cast<void*>(d_o),
                                 const_cast<float*>(lse),
                                 dq,
                                 dk,
                                 dv,
                                 const_cast<float*>(&s.attn_scale),
                                 const_cast<float*>(&s.one),
                                 scratch + s.row_dot_offset,
                                 dq_accum};
  if (s.params.causal) {
    uids.push_back(kUidNegInf);
    pointers.push_back(const_cast<float*>(&s.neg_inf));
  }
  s.execute(uids, pointers, workspace, stream);
}

std::string cudnn_version_string() {
  const int64_t version = runtime_cudnn_version();
  std::ostringstream text;
  text << version / 10000 << "." << (version % 10000) / 100 << "." << version % 100 << " (backend "
       << version;
  if (version != CUDNN_VERSION) text << ", headers " << CUDNN_VERSION;
  text << ")";
  return text.str();
}

bool cudnn_sdpa_fp8_available(int cc_major, int cc_minor) {
  (void)cc_minor;  // every sm_9x and later part qualifies
  return cc_major >= 9 && runtime_cudnn_version() >= 90100;
}

}  // namespace gpucal::attention
