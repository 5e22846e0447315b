// The implementations of the bench_memory kernels, each behind one interface: `host`
// (OpenMP loops, the CI implementation), `gpucal` (our CUDA/HIP kernels, one source through
// the portability header) and `cudnn` (cuDNN's normalization through the backend graph API,
// layernorm and rmsnorm, forward and backward). An implementation is made per point, so a library plan
// built in prepare() lives with its point.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench_memory/launch_args.h"
#include "core/backend/backend.h"
#include "core/output/row.h"

namespace gpucal::memory {

class KernelImpl {
 public:
  virtual ~KernelImpl() = default;
  // Throws SkipPoint with a one-line reason when this implementation cannot run the kernel
  // in this dtype on this backend. Runs before anything is allocated.
  virtual void check_supported(Kernel k, DType t) const = 0;
  // Scratch bytes for a launch (partial sums, library workspace); allocated by the caller.
  virtual size_t workspace_bytes(const LaunchArgs& a) const = 0;
  // Descriptors, plans and library workspace (untimed, allocated from `backend`); the tensors
  // exist and hold their inputs.
  virtual void prepare(const LaunchArgs&, Backend&) {}
  // One launch, asynchronous on the backend's stream.
  virtual void launch(const LaunchArgs& a) = 0;
  // The launch whose outputs are checked (untimed): an implementation whose library writes an
  // output in another type (cuDNN's fp32 weight gradients) stores it into the point's tensor
  // here. Returns with the outputs complete on the host's view (after a synchronize).
  virtual void launch_for_check(const LaunchArgs& a, Backend&) { launch(a); }
  // Provenance cells (engine, graph build time).
  virtual void describe(Row&) const {}
};

// Per-process library state shared by the points of a run (the cuDNN handle).
class LibraryContext {
 public:
  virtual ~LibraryContext() = default;
  virtual std::string version() const = 0;
};

// The implementations registry: bench_memory's --impl choices, help and validation, and
// bench_step's choice per backend, come from it. Adding one: its file, its row in
// memory_impls.cpp, its source in bench_memory/CMakeLists.txt.
struct MemoryImpl {
  std::string_view name;  // --impl value, and the rows' impl column
  std::string_view help;
  std::vector<std::string_view> backends;  // the backends it runs on
  // What a build must have found at configure time to have it (empty: always built); --list-impls
  // --markdown shows it, the same from every build.
  std::string_view needs{};
  // Why this build lacks it (its toolkit was not found at configure time); empty when built.
  std::string_view missing{};
  bool (*offers)(Kernel k) = nullptr;  // the kernels it measures; nullptr: every kernel
  // The run's shared state (nullptr where the implementation needs none).
  std::shared_ptr<LibraryContext> (*make_context)(Backend& backend) = nullptr;
  std::unique_ptr<KernelImpl> (*make)(Backend& backend, std::shared_ptr<LibraryContext> ctx) = nullptr;
};

const std::vector<MemoryImpl>& memory_impls();
// --list-impls: the table above with the kernels each offers, plain or markdown
// (core/registry/listing.h).
std::string memory_impls_table(bool markdown);
// "auto" is every implementation of the backend this build has (cuda: gpucal, cudnn); otherwise a
// list of names (UsageError for an unknown one). An implementation on a backend it does not run
// on checks each kernel (check_supported) and records skips.
std::vector<const MemoryImpl*> resolve_memory_impls(const std::string& spec, const std::string& backend);

std::unique_ptr<KernelImpl> make_host_impl();
// gpucal's own kernels on the cuda or hip backend (whichever this binary has); throws
// SkipPoint from check_supported when the backend is neither.
std::unique_ptr<KernelImpl> make_gpu_impl(Backend& backend);
bool have_gpu_kernels();
#if defined(GPUCAL_HAVE_CUDNN)
std::shared_ptr<LibraryContext> make_cudnn_context(Backend& backend);
std::unique_ptr<KernelImpl> make_cudnn_impl(std::shared_ptr<LibraryContext> ctx);
#endif
// The kernels the cudnn implementation measures (answered in every build).
inline bool cudnn_offers(Kernel k) {
  return k == Kernel::layernorm_fwd || k == Kernel::rmsnorm_fwd || k == Kernel::layernorm_bwd ||
         k == Kernel::rmsnorm_bwd;
}

}  // namespace gpucal::memory
