// The GEMM implementations registry: one row per library, each behind the same GemmOp interface
// (one file per library: gemm_host.cpp, gemm_cublaslt.cpp, gemm_hipblaslt.hip). bench_gemm's
// --impl choices, help and validation, and bench_step's choice per backend, come from it.
// Adding a library: its file, its row in gemm_impls.cpp, its source in bench_gemm/CMakeLists.txt.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_gemm/gemm_op.h"

namespace gpucal::gemm {

// Per-process library state shared by every point of a run (handles, workspace, and
// descriptors cached per shape), created once before the sweep so no point pays for it.
class LibraryContext {
 public:
  virtual ~LibraryContext() = default;
  virtual std::string version() const = 0;
};

struct GemmImpl {
  std::string_view name;     // --impl value, and the sidecar's library name
  std::string_view backend;  // the backend it runs on: host, cuda or hip
  std::string_view help;
  // What a build must have found at configure time to have it (empty: always built); --list-impls
  // --markdown shows it, the same from every build.
  std::string_view needs{};
  // Why this build lacks it (its toolkit was not found at configure time); empty when built.
  std::string_view missing{};
  // The library workspace a run gets unless --workspace says otherwise (0: none).
  size_t (*default_workspace)(const Backend& backend) = nullptr;
  // The run's shared state (nullptr where the library needs none).
  std::shared_ptr<LibraryContext> (*make_context)(Backend& backend, size_t workspace_bytes) = nullptr;
  std::unique_ptr<GemmOp> (*make_op)(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o,
                                     std::shared_ptr<LibraryContext> ctx) = nullptr;
};

const std::vector<GemmImpl>& gemm_impls();
// --list-impls: the table above, plain or markdown (core/registry/listing.h).
std::string gemm_impls_table(bool markdown);
// "auto" is the backend's first row; UsageError for an unknown name, a library of another backend
// or one this build lacks (decided before any library is loaded).
const GemmImpl& resolve_gemm_impl(std::string_view name, const Backend& backend);

// The libraries' entry points (each in its own file).
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
