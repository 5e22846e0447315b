// `flash`: gpucal's portable FA2-style kernel (flash_kernels.cuh) behind AttentionOp, on the
// cuda or hip backend, whichever this build has and the run selected. The two vendor builds
// of the kernel export the same API in their own namespaces; this file picks one at run time.
#include <stdexcept>

#include "bench_attention/attention_impls.h"
#include "bench_attention/flash_attention.h"
#include "core/errors.h"

namespace gpucal::attention {

namespace {

struct FlashApi {
  const char* vendor = nullptr;
  void (*check)(const AttentionParams&) = nullptr;
  size_t (*fwd_workspace)(const AttentionParams&) = nullptr;
  size_t (*bwd_workspace)(const AttentionParams&) = nullptr;
  void (*forward)(const AttentionParams&, const void*, const void*, const void*, void*, float*, void*, void*) = nullptr;
  void (*backward)(const AttentionParams&, const void*, const void*, const void*, const void*, const void*,
                   const float*, void*, void*, void*, void*, void*) = nullptr;
};

FlashApi api_for(const std::string& backend) {
#if defined(GPUCAL_HAVE_FLASH_CUDA)
  if (backend == "cuda")
    return {"cuda", cuda::flash_check_supported, cuda::flash_fwd_workspace_bytes, cuda::flash_bwd_workspace_bytes,
            cuda::flash_forward, cuda::flash_backward};
#endif
#if defined(GPUCAL_HAVE_FLASH_HIP)
  if (backend == "hip")
    return {"hip", hip::flash_check_supported, hip::flash_fwd_workspace_bytes, hip::flash_bwd_workspace_bytes,
            hip::flash_forward, hip::flash_backward};
#endif
  throw SkipPoint("the flash implementation runs on a GPU backend built into this binary, not on " + backend);
}

class FlashAttention : public AttentionOp {
 public:
  using AttentionOp::AttentionOp;

 protected:
  void check_supported() override {
    api_ = api_for(backend_->name());
    if (p_.dtype != DType::fp16 && p_.dtype != DType::bf16)
      throw SkipPoint("flash: dtype must be fp16 or bf16, not " + gpucal::to_string(p_.dtype));
    try {
      api_.check(p_.shape);
    } catch (const std::invalid_argument& e) {
      throw SkipPoint(e.what());
    }
  }
  size_t workspace_estimate() const override { return workspace_size(); }
  void prepare() override {
    ws_bytes_ = workspace_size();
    if (ws_bytes_ > 0) workspace_ = backend_->allocate(ws_bytes_);
  }
  void forward() override {
    api_.forward(p_.shape, q_.get(), k_.get(), v_.get(), o_.get(), lse_.as<float>(), workspace_.get(),
                 backend_->stream());
  }
  void backward() override {
    api_.backward(p_.shape, q_.get(), k_.get(), v_.get(), o_.get(), do_.get(), lse_.as<float>(), dq_.get(),
                  dk_.get(), dv_.get(), workspace_.get(), backend_->stream());
  }
  void describe_impl(Row& row) const override {
    row.set("engine", std::string("gpucal flash (FA2-style, ") + api_.vendor + ")")
        .set("workspace_bytes", static_cast<int64_t>(ws_bytes_));
  }
  void release() override { workspace_.reset(); }

 private:
  size_t workspace_size() const {
    size_t ws = api_.fwd_workspace(p_.shape);
    if (p_.needs_backward()) ws = std::max(ws, api_.bwd_workspace(p_.shape));
    return ws;
  }
  FlashApi api_;
  Buffer workspace_;
  size_t ws_bytes_ = 0;
};

}  // namespace

std::unique_ptr<AttentionOp> make_flash_attention(const AttentionProblem& p, const std::string& regime) {
  return std::make_unique<FlashAttention>(p, "flash", regime);
}

}  // namespace gpucal::attention
