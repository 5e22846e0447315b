// `cudnn`: cuDNN 9 fused SDPA (attention_cudnn.h) behind AttentionOp. Graphs are built and
// plans chosen in prepare(), outside timing; their build time is the graph_build_ms column.
#include <cudnn.h>

#include <algorithm>

#include "bench_attention/attention_cudnn.h"
#include "bench_attention/attention_impls.h"
#include "core/errors.h"

namespace gpucal::attention {

namespace {

class CudnnContext : public LibraryContext {
 public:
  CudnnContext() { CUDNN_CHECK(cudnnCreate(&handle_)); }
  ~CudnnContext() override { cudnnDestroy(handle_); }
  std::string version() const override { return cudnn_version_string(); }
  cudnnHandle_t handle() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

class CudnnAttention : public AttentionOp {
 public:
  CudnnAttention(const AttentionProblem& p, const std::string& regime, std::shared_ptr<LibraryContext> ctx)
      : AttentionOp(p, "cudnn", regime), ctx_(std::static_pointer_cast<CudnnContext>(std::move(ctx))) {}

 protected:
  void check_supported() override {
    if (backend_->name() != "cuda" || !ctx_) throw SkipPoint("cudnn runs on the cuda backend only");
    if (p_.dtype != DType::fp16 && p_.dtype != DType::bf16 && p_.dtype != DType::fp8_e4m3)
      throw SkipPoint("cuDNN fused SDPA takes fp16, bf16 (and fp8 where available), not " +
                      gpucal::to_string(p_.dtype));
  }
  void prepare() override {
    try {
      // The forward graph always: the backward pass needs O and LSE from it (computed untimed).
      fwd_ = std::make_unique<CudnnSdpa>(ctx_->handle(), p_.shape, CudnnSdpa::Pass::fwd);
      if (p_.needs_backward()) bwd_ = std::make_unique<CudnnSdpa>(ctx_->handle(), p_.shape, CudnnSdpa::Pass::bwd);
    } catch (const CudnnUnsupported& e) {
      throw SkipPoint(e.what());
    }
    ws_bytes_ = std::max(fwd_->workspace_bytes(), bwd_ ? bwd_->workspace_bytes() : size_t{0});
    if (ws_bytes_ > 0) workspace_ = backend_->allocate(ws_bytes_);
  }
  void forward() override {
    fwd_->forward(q_.get(), k_.get(), v_.get(), o_.get(), lse_.as<float>(), workspace_.get(), stream());
  }
  void backward() override {
    bwd_->backward(q_.get(), k_.get(), v_.get(), o_.get(), do_.get(), lse_.as<float>(), dq_.get(), dk_.get(),
                   dv_.get(), workspace_.get(), stream());
  }
  void describe_impl(Row& row) const override {
    // Build time and engine of the graphs the timed pass runs.
    double ms = 0;
    std::string engine;
    if (p_.pass != AttnPass::bwd) ms += fwd_->build_ms(), engine = "fwd: " + fwd_->engine_description();
    if (bwd_) ms += bwd_->build_ms(), engine += (engine.empty() ? "" : "; ") + ("bwd: " + bwd_->engine_description());
    row.set("graph_build_ms", ms).set("workspace_bytes", static_cast<int64_t>(ws_bytes_)).set("engine", engine);
  }
  void release() override {
    workspace_.reset();
    fwd_.reset();
    bwd_.reset();
  }

 private:
  cudaStream_t stream() const { return static_cast<cudaStream_t>(backend_->stream()); }
  std::shared_ptr<CudnnContext> ctx_;
  std::unique_ptr<CudnnSdpa> fwd_, bwd_;
  Buffer workspace_;
  size_t ws_bytes_ = 0;
};

}  // namespace

std::shared_ptr<LibraryContext> make_cudnn_context(Backend&) { return std::make_shared<CudnnContext>(); }

std::unique_ptr<AttentionOp> make_cudnn_attention(const AttentionProblem& p, const std::string& regime,
                                                  std::shared_ptr<LibraryContext> ctx) {
  return std::make_unique<CudnnAttention>(p, regime, std::move(ctx));
}

}  // namespace gpucal::attention
