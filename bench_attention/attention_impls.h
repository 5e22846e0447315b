// The attention implementations this build has, each behind the same AttentionOp interface.
#pragma once

#include <memory>
#include <string>

#include "bench_attention/attention_op.h"

namespace gpucal::attention {

// Per-process library state shared by every point of a run (the cuDNN handle), created once
// before the sweep so that no point pays for it.
class LibraryContext {
 public:
  virtual ~LibraryContext() = default;
  virtual std::string version() const = 0;
};

// host: blocked two-pass softmax over OpenBLAS sgemm/dgemm (fp32, fp64); the CI implementation.
std::unique_ptr<AttentionOp> make_host_attention(const AttentionProblem& p, const std::string& regime);

#if defined(GPUCAL_HAVE_FLASH_CUDA) || defined(GPUCAL_HAVE_FLASH_HIP)
// flash: gpucal's portable FA2-style kernel (flash_kernels.cuh) on the cuda or hip backend.
std::unique_ptr<AttentionOp> make_flash_attention(const AttentionProblem& p, const std::string& regime);
#endif
#if defined(GPUCAL_HAVE_CUDNN)
std::shared_ptr<LibraryContext> make_cudnn_context(Backend& backend);
std::unique_ptr<AttentionOp> make_cudnn_attention(const AttentionProblem& p, const std::string& regime,
                                                  std::shared_ptr<LibraryContext> ctx);
#endif

}  // namespace gpucal::attention
