// `cudnn`: cuDNN's layer and RMS normalization, forward in the training phase (it writes the
// statistics a backward needs, as our kernels do), through the cuDNN 9 backend graph API: the
// graph cudnn-frontend's LayerNormNode / RMSNormNode lower to, one
// CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR over
//   X, Y        [rows, cols, 1, 1], strides [cols, 1, cols, cols], the point's dtype;
//   scale, bias [1, cols, 1, 1] in fp32, as cudnn-frontend's layernorm samples build them (our
//               gamma and beta are converted once in prepare, untimed);
//   mean, inverse variance [rows, 1, 1, 1] fp32 (RMSNorm: inverse variance only);
//   epsilon     a by-value fp32 scalar.
// Backward: one CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR over X, DY, DX (the point's
// dtype), scale, mean (LayerNorm), inverse variance and DSCALE, DBIAS (LayerNorm) in fp32 (the
// frontend's layernorm_backward/rmsnorm_backward samples: fp32 weight gradients). Our dgamma and
// dbeta tensors hold the point's dtype, so the verification launch converts cuDNN's fp32
// gradients into them (launch_for_check, untimed); the timed launches write only cuDNN's own.
// The graph is built and the plan chosen in prepare (graph_build_ms); a configuration no
// engine runs is a recorded skip. The fp32 weights read 2 bytes more per column than the
// bytes column counts for 16-bit dtypes (cols x 2 or 4 bytes: negligible next to rows x cols).
#include <chrono>
#include <limits>
#include <vector>

#include "bench_memory/memory_impls.h"
#include "core/backend/cudnn_graph.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"
#include "core/backend/gpu_runtime.h"

namespace gpucal::memory {

namespace {

enum Uid : int64_t {
  kUidX = 1,
  kUidScale,
  kUidBias,
  kUidY,
  kUidMean,
  kUidInvVar,
  kUidEpsilon,
  kUidDy,
  kUidDx,
  kUidDscale,
  kUidDbias
};
constexpr int64_t kFirstVirtualUid = 100;

class CudnnContext : public LibraryContext {
 public:
  explicit CudnnContext(Backend& backend) {
    CUDNN_CHECK(cudnnCreate(&handle));
    CUDNN_CHECK(cudnnSetStream(handle, static_cast<cudaStream_t>(backend.stream())));
  }
  ~CudnnContext() override { (void)cudnnDestroy(handle); }
  std::string version() const override {
    const size_t v = cudnnGetVersion();  // e.g. 91900
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  }
  cudnnHandle_t handle = nullptr;
};

cudnnDataType_t cudnn_type(DType t) {
  switch (t) {
    case DType::fp16:
      return CUDNN_DATA_HALF;
    case DType::bf16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

class CudnnNorm : public KernelImpl {
 public:
  explicit CudnnNorm(std::shared_ptr<LibraryContext> ctx)
      : ctx_(std::dynamic_pointer_cast<CudnnContext>(ctx)) {}

  void check_supported(Kernel k, DType t) const override {
    if (!ctx_) throw SkipPoint("cudnn runs on the cuda backend");
    if (!cudnn_offers(k))
      throw SkipPoint("cudnn: bench_memory measures cuDNN's layernorm and rmsnorm, forward and backward");
    if (t != DType::fp32 && t != DType::fp16 && t != DType::bf16)
      throw SkipPoint("cudnn normalization: fp32, fp16 or bf16, not " + to_string(t));
  }
  size_t workspace_bytes(const LaunchArgs&) const override { return 0; }  // the plan's, allocated in prepare

  void prepare(const LaunchArgs& a, Backend& backend) override {
    const auto t0 = std::chrono::steady_clock::now();
    const bool backward = a.kernel == Kernel::layernorm_bwd || a.kernel == Kernel::rmsnorm_bwd;
    std::vector<int64_t> uids;
    std::vector<void*> pointers;
    BackendDescriptor op =
        backward ? backward_op(a, backend, uids, pointers) : forward_op(a, backend, uids, pointers);
    const bool layer = a.kernel == Kernel::layernorm_fwd || a.kernel == Kernel::layernorm_bwd;
    const std::string what = std::string("cuDNN ") + (layer ? "layer" : "RMS") + " norm " +
                             (backward ? "backward " : "forward ") + to_string(a.dtype) + " rows " +
                             std::to_string(a.dims.rows) + " cols " + std::to_string(a.dims.cols);
    try {
      op.finalize();
      builder_.add_operation(std::move(op));
      graph_ = builder_.build(ctx_->handle);
      plan_ = build_first_supported_plan(ctx_->handle, graph_);
    } catch (const CudnnUnsupported& e) {
      throw SkipPoint(what + ": " + e.what());
    } catch (const CudnnError& e) {
      if (e.is_not_supported()) throw SkipPoint(what + ": not supported: " + e.what());
      throw;
    }
    workspace_ = backend.allocate(static_cast<size_t>(std::max<int64_t>(plan_.workspace_bytes, 1)));
    pack_ = make_variant_pack(uids, pointers, workspace_.get());
    build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  void launch(const LaunchArgs&) override {
    CUDNN_CHECK(cudnnBackendExecute(ctx_->handle, plan_.plan.get(), pack_.get()));
  }

  // Backward: poison cuDNN's fp32 weight gradients, launch, and store them into the point's
  // dgamma (and dbeta) tensors in its dtype, where the check reads them.
  void launch_for_check(const LaunchArgs& a, Backend& backend) override {
    if (!dscale_.get()) return launch(a);
    const size_t C = static_cast<size_t>(a.dims.cols);
    const double poison = std::numeric_limits<double>::quiet_NaN();
    backend.fill_constant(dscale_.get(), C, DType::fp32, poison);
    if (dbias_.get()) backend.fill_constant(dbias_.get(), C, DType::fp32, poison);
    launch(a);
    backend.synchronize();
    const bool layer = a.kernel == Kernel::layernorm_bwd;
    convert(backend, dscale_.get(), DType::fp32, a.tensors[layer ? 6 : 5], a.dtype, C);
    if (dbias_.get()) convert(backend, dbias_.get(), DType::fp32, a.tensors[7], a.dtype, C);
  }

  void describe(Row& row) const override {
    row.set("engine", "cudnn " + ctx_->version() + " " + plan_.description)
        .set("graph_build_ms", build_ms_)
        .set("workspace_bytes", plan_.workspace_bytes);
  }

 private:
  // `count` elements of `src` (type `from`) stored into `dst` as type `to`, through the host.
  static void convert(Backend& backend, const void* src, DType from, void* dst, DType to, size_t count) {
    const std::vector<double> v = backend.to_host_doubles(src, count, from);
    std::vector<unsigned char> bytes(count * dtype_bytes(to));
    for (size_t i = 0; i < count; ++i) elem::store_from_double(bytes.data(), i, static_cast<int>(to), v[i]);
    backend.copy(dst, bytes.data(), bytes.size());
    backend.synchronize();
  }
  // fp32 copy of a `cols` weight vector (gamma, beta), made once in prepare.
  static Buffer to_fp32(Backend& backend, const void* src, int64_t cols, DType dtype) {
    Buffer out = backend.allocate(static_cast<size_t>(cols) * sizeof(float));
    convert(backend, src, dtype, out.get(), DType::fp32, static_cast<size_t>(cols));
    return out;
  }

  BackendDescriptor forward_op(const LaunchArgs& a, Backend& backend, std::vector<int64_t>& uids,
                               std::vector<void*>& pointers) {
    const bool layer = a.kernel == Kernel::layernorm_fwd;
    const int64_t R = a.dims.rows, C = a.dims.cols;
    scale_ = to_fp32(backend, a.tensors[1], C, a.dtype);
    if (layer) bias_ = to_fp32(backend, a.tensors[2], C, a.dtype);

    const cudnnDataType_t io = cudnn_type(a.dtype);
    OperationGraphBuilder& g = builder_;
    const GraphTensor x = g.tensor(kUidX, {R, C, 1, 1}, {C, 1, C, C}, io);
    const GraphTensor scale = g.tensor(kUidScale, {1, C, 1, 1}, {C, 1, C, C}, CUDNN_DATA_FLOAT);
    const GraphTensor y = g.tensor(kUidY, {R, C, 1, 1}, {C, 1, C, C}, io);
    const GraphTensor inv_var = g.tensor(kUidInvVar, {R, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT);
    const GraphTensor epsilon = g.scalar(kUidEpsilon, CUDNN_DATA_FLOAT);
    BackendDescriptor op(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR);
    const cudnnBackendNormMode_t mode = layer ? CUDNN_LAYER_NORM : CUDNN_RMS_NORM;
    const cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_TRAINING;
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, x.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, scale.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, epsilon.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, y.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, inv_var.desc);
    uids = {kUidX, kUidScale, kUidY, kUidInvVar, kUidEpsilon};
    epsilon_ = a.s.norm_eps;  // passed by value: the pointer must live as long as the pack
    pointers = {a.tensors[0], scale_.get(), a.tensors[layer ? 3 : 2], a.tensors[layer ? 5 : 3], &epsilon_};
    if (layer) {
      const GraphTensor bias = g.tensor(kUidBias, {1, C, 1, 1}, {C, 1, C, C}, CUDNN_DATA_FLOAT);
      const GraphTensor mean = g.tensor(kUidMean, {R, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT);
      op.set_descriptor(CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, bias.desc)
          .set_descriptor(CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, mean.desc);
      uids.insert(uids.end(), {kUidBias, kUidMean});
      pointers.insert(pointers.end(), {bias_.get(), a.tensors[4]});
    }
    return op;
  }

  // Tensors (kernel_table.cpp): layernorm_bwd dy, x, gamma, mean, rstd, dx, dgamma, dbeta;
  // rmsnorm_bwd dy, x, gamma, rstd, dx, dgamma.
  BackendDescriptor backward_op(const LaunchArgs& a, Backend& backend, std::vector<int64_t>& uids,
                                std::vector<void*>& pointers) {
    const bool layer = a.kernel == Kernel::layernorm_bwd;
    const int64_t R = a.dims.rows, C = a.dims.cols;
    scale_ = to_fp32(backend, a.tensors[2], C, a.dtype);
    dscale_ = backend.allocate(static_cast<size_t>(C) * sizeof(float));
    if (layer) dbias_ = backend.allocate(static_cast<size_t>(C) * sizeof(float));

    const cudnnDataType_t io = cudnn_type(a.dtype);
    OperationGraphBuilder& g = builder_;
    const GraphTensor x = g.tensor(kUidX, {R, C, 1, 1}, {C, 1, C, C}, io);
    const GraphTensor dy = g.tensor(kUidDy, {R, C, 1, 1}, {C, 1, C, C}, io);
    const GraphTensor dx = g.tensor(kUidDx, {R, C, 1, 1}, {C, 1, C, C}, io);
    const GraphTensor scale = g.tensor(kUidScale, {1, C, 1, 1}, {C, 1, C, C}, CUDNN_DATA_FLOAT);
    const GraphTensor dscale = g.tensor(kUidDscale, {1, C, 1, 1}, {C, 1, C, C}, CUDNN_DATA_FLOAT);
    const GraphTensor inv_var = g.tensor(kUidInvVar, {R, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT);
    BackendDescriptor op(CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR);
    const cudnnBackendNormMode_t mode = layer ? CUDNN_LAYER_NORM : CUDNN_RMS_NORM;
    op.set(CUDNN_ATTR_OPERATION_NORM_BWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, x.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, dy.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, scale.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, inv_var.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, dscale.desc)
        .set_descriptor(CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, dx.desc);
    uids = {kUidX, kUidDy, kUidDx, kUidScale, kUidDscale, kUidInvVar};
    pointers = {a.tensors[1], a.tensors[0],  a.tensors[layer ? 5 : 4],
                scale_.get(), dscale_.get(), a.tensors[layer ? 4 : 3]};
    if (layer) {
      const GraphTensor mean = g.tensor(kUidMean, {R, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT);
      const GraphTensor dbias = g.tensor(kUidDbias, {1, C, 1, 1}, {C, 1, C, C}, CUDNN_DATA_FLOAT);
      op.set_descriptor(CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, mean.desc)
          .set_descriptor(CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, dbias.desc);
      uids.insert(uids.end(), {kUidMean, kUidDbias});
      pointers.insert(pointers.end(), {a.tensors[3], dbias_.get()});
    }
    return op;
  }

  std::shared_ptr<CudnnContext> ctx_;
  OperationGraphBuilder builder_{kFirstVirtualUid};  // owns the tensor and operation descriptors
  BackendDescriptor graph_, pack_;
  ExecutionPlan plan_;
  Buffer scale_, bias_, dscale_, dbias_, workspace_;
  float epsilon_ = 0;
  double build_ms_ = 0;
};

}  // namespace

std::shared_ptr<LibraryContext> make_cudnn_context(Backend& backend) {
  return std::make_shared<CudnnContext>(backend);
}

std::unique_ptr<KernelImpl> make_cudnn_impl(std::shared_ptr<LibraryContext> ctx) {
  return std::make_unique<CudnnNorm>(std::move(ctx));
}

}  // namespace gpucal::memory
