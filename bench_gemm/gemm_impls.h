// The GEMM implementations this build has, each behind the same GemmOp interface.
#pragma once

#include <memory>
#include <string>

#include "bench_gemm/gemm_op.h"

namespace gpucal::gemm {

// Per-process library state shared by every point of a run (handles, workspace, and
// descriptors cached per shape), created once before the sweep so no point pays for it.
class LibraryContext {
 public:
  virtual ~LibraryContext() = default;
  virtual std::string version() const = 0;
};

std::unique_ptr<GemmOp> make_host_gemm(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o);

#if defined(GPUCAL_HAVE_CUDA)
std::shared_ptr<LibraryContext> make_cublaslt_context(Backend& backend, size_t workspace_bytes);
std::unique_ptr<GemmOp> make_cublaslt_gemm(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o,
                                           std::shared_ptr<LibraryContext> ctx);
#endif
#if defined(GPUCAL_HAVE_HIPBLASLT)
std::shared_ptr<LibraryContext> make_hipblaslt_context(Backend& backend, size_t workspace_bytes);
std::unique_ptr<GemmOp> make_hipblaslt_gemm(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o,
                                            std::shared_ptr<LibraryContext> ctx);
#endif

}  // namespace gpucal::gemm
