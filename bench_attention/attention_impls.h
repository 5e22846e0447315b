// The attention implementations registry: one row per implementation, each behind the same
// AttentionOp interface (one file each: attention_host.cpp, attention_cudnn_op.cpp,
// attention_flash_op.cpp). bench_attention's --impl choices, help and validation, and bench_step's
// choice per backend, come from it. Adding one: its file, its row in attention_impls.cpp, its
// source in bench_attention/CMakeLists.txt.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_attention/attention_op.h"

namespace gpucal::attention {

// Per-process library state shared by every point of a run (the cuDNN handle), created once
// before the sweep so that no point pays for it.
class LibraryContext {
 public:
  virtual ~LibraryContext() = default;
  virtual std::string version() const = 0;
};

struct AttentionImpl {
  std::string_view name;  // --impl value
  std::string_view help;
  std::vector<std::string_view> backends;  // the backends it runs on, in the order --impl auto tries them
  // What a build must have found at configure time to have it (empty: always built); --list-impls
  // --markdown shows it, the same from every build.
  std::string_view needs{};
  // Why this build lacks it (its toolkit was not found at configure time); empty when built.
  std::string_view missing{};
  // The run's shared state (nullptr where the implementation needs none).
  std::shared_ptr<LibraryContext> (*make_context)(Backend& backend) = nullptr;
  std::unique_ptr<AttentionOp> (*make_op)(const AttentionProblem& p, const std::string& regime,
                                          std::shared_ptr<LibraryContext> ctx) = nullptr;
};

const std::vector<AttentionImpl>& attention_impls();
// --list-impls: the table above, plain or markdown (core/registry/listing.h).
std::string attention_impls_table(bool markdown);
// "auto" is every implementation of the backend this build has (cuda: cudnn, flash); otherwise a
// list of names.
// UsageError for an unknown name, an implementation of another backend or one this build lacks.
std::vector<const AttentionImpl*> resolve_attention_impls(const std::string& spec, const Backend& backend);
// The first implementation of the backend this build has (cuda: cudnn, else flash), as
// bench_step runs one; UsageError where there is none.
const AttentionImpl& default_attention_impl(const Backend& backend);

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
