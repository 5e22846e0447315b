#include "bench_gemm/gemm_impls.h"

#include "core/errors.h"
#include "core/registry/listing.h"
#include "core/registry/registry.h"

namespace gpucal::gemm {

namespace {

// cuBLASLt's recommendation for Hopper is 32 MiB (the sm_90 kernels with many stages and
// split-K reductions need it); 4 MiB covers the heuristic's picks elsewhere.
[[maybe_unused]] size_t vendor_workspace(const Backend& backend) {
  return backend.info().arch.rfind("sm_9", 0) == 0 ? (32u << 20) : (4u << 20);
}

}  // namespace

const std::vector<GemmImpl>& gemm_impls() {
  static const std::vector<GemmImpl> table{
      {.name = "openblas", .backend = "host", .help = "OpenBLAS sgemm/dgemm on the host (fp32, fp64)",
       .default_workspace = [](const Backend&) -> size_t { return 0; },
       .make_op = [](const GemmProblem& p, const std::string& regime, const GemmRunOptions& o,
                     std::shared_ptr<LibraryContext>) { return make_host_gemm(p, regime, o); }},
#if defined(GPUCAL_HAVE_CUDA)
      {.name = "cublaslt", .backend = "cuda", .help = "cuBLASLt matmul with its heuristic or autotuned algorithms",
       .needs = registry::needs::kCuda, .default_workspace = vendor_workspace, .make_context = make_cublaslt_context,
       .make_op = make_cublaslt_gemm},
#else
      {.name = "cublaslt", .backend = "cuda", .help = "cuBLASLt matmul with its heuristic or autotuned algorithms",
       .needs = registry::needs::kCuda, .missing = "this build has no CUDA backend"},
#endif
#if defined(GPUCAL_HAVE_HIPBLASLT)
      {.name = "hipblaslt", .backend = "hip", .help = "hipBLASLt matmul with its heuristic or autotuned algorithms",
       .needs = registry::needs::kHipblaslt, .default_workspace = vendor_workspace, .make_context = make_hipblaslt_context,
       .make_op = make_hipblaslt_gemm},
#else
      {.name = "hipblaslt", .backend = "hip", .help = "hipBLASLt matmul with its heuristic or autotuned algorithms",
       .needs = registry::needs::kHipblaslt, .missing = "this build has no hipBLASLt (not found at configure time)"},
#endif
  };
  return table;
}

std::string gemm_impls_table(bool markdown) {
  std::vector<registry::ImplRow> rows;
  for (const GemmImpl& impl : gemm_impls()) rows.push_back(registry::impl_row(impl, std::string(impl.backend)));
  return registry::impl_table(rows, markdown);
}

const GemmImpl& resolve_gemm_impl(std::string_view name, const Backend& backend) {
  if (name == "auto") {
    for (const GemmImpl& impl : gemm_impls())
      if (impl.backend == backend.name()) {
        if (!impl.missing.empty())
          throw UsageError("no GEMM library for the " + backend.name() + " backend: " + std::string(impl.missing));
        return impl;
      }
    throw UsageError("no GEMM library for the " + backend.name() + " backend in this build");
  }
  std::vector<std::string> names{"auto"};
  for (const auto& n : registry::names(gemm_impls())) names.push_back(n);
  const GemmImpl* impl = registry::find(gemm_impls(), name);
  if (impl == nullptr) throw UsageError("--impl: " + registry::unknown_message("GEMM library", name, names));
  if (impl->backend != backend.name())
    throw UsageError("--impl " + std::string(name) + " needs --backend " + std::string(impl->backend) +
                     " (this run's backend is " + backend.name() + ")");
  if (!impl->missing.empty()) throw UsageError("--impl " + std::string(name) + ": " + std::string(impl->missing));
  return *impl;
}

}  // namespace gpucal::gemm
