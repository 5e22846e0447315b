#include "bench_memory/memory_impls.h"

#include "core/driver/sweep.h"
#include "core/errors.h"
#include "core/registry/listing.h"
#include "core/registry/registry.h"

namespace gpucal::memory {

using registry::runs_on;

namespace {
// The kernels an implementation measures, in the kernel table's order ("all" for every one).
std::string offered_kernels(const MemoryImpl& impl) {
  if (impl.offers == nullptr) return "all";
  std::vector<std::string> names;
  for (const KernelDesc& k : kernel_table())
    if (impl.offers(k.id)) names.emplace_back(k.name);
  return registry::join(names);
}
}  // namespace

const std::vector<MemoryImpl>& memory_impls() {
  static const std::vector<MemoryImpl> table{
      {.name = "host", .help = "OpenMP loops on the host; the CI implementation", .backends = {"host"},
       .make = [](Backend&, std::shared_ptr<LibraryContext>) { return make_host_impl(); }},
#if defined(GPUCAL_HAVE_MEMORY_CUDA) || defined(GPUCAL_HAVE_MEMORY_HIP)
      {.name = "gpucal", .help = "gpucal's CUDA/HIP kernels, one source through the portability header",
       .backends = {"cuda", "hip"}, .needs = registry::needs::kCudaOrHip,
       .make = [](Backend& backend, std::shared_ptr<LibraryContext>) { return make_gpu_impl(backend); }},
#else
      {.name = "gpucal", .help = "gpucal's CUDA/HIP kernels, one source through the portability header",
       .backends = {"cuda", "hip"}, .needs = registry::needs::kCudaOrHip, .missing = "this build has no CUDA or HIP backend"},
#endif
#if defined(GPUCAL_HAVE_CUDNN)
      {.name = "cudnn", .help = "cuDNN's layernorm and rmsnorm, forward and backward (backend graph API)",
       .backends = {"cuda"}, .needs = registry::needs::kCudnn, .offers = cudnn_offers, .make_context = make_cudnn_context,
       .make = [](Backend&, std::shared_ptr<LibraryContext> ctx) { return make_cudnn_impl(ctx); }},
#else
      {.name = "cudnn", .help = "cuDNN's layernorm and rmsnorm, forward and backward (backend graph API)",
       .backends = {"cuda"}, .needs = registry::needs::kCudnn,
       .missing = "this build has no cuDNN (CUDA or cuDNN not found at configure time)",
       .offers = cudnn_offers},
#endif
  };
  return table;
}

std::string memory_impls_table(bool markdown) {
  std::vector<registry::ImplRow> rows;
  for (const MemoryImpl& impl : memory_impls()) {
    registry::ImplRow row = registry::impl_row(impl, registry::backends_text(impl));
    row.extra = offered_kernels(impl);
    rows.push_back(row);
  }
  return registry::impl_table(rows, markdown, "kernels");
}

std::vector<const MemoryImpl*> resolve_memory_impls(const std::string& spec, const std::string& backend) {
  std::vector<const MemoryImpl*> out;
  if (spec == "auto") {  // the backend's implementations this build has
    for (const MemoryImpl& impl : memory_impls())
      if (runs_on(impl, backend) && impl.missing.empty()) out.push_back(&impl);
    if (out.empty()) throw UsageError("no memory kernels for the " + backend + " backend in this build");
    return out;
  }
  for (const auto& name : parse_word_list(spec, "impl", registry::names(memory_impls())))
    out.push_back(registry::find(memory_impls(), name));
  return out;
}

}  // namespace gpucal::memory
