#include "bench_attention/attention_impls.h"

#include "core/driver/sweep.h"
#include "core/errors.h"
#include "core/registry/listing.h"
#include "core/registry/registry.h"

namespace gpucal::attention {

using registry::backends_text;
using registry::runs_on;

const std::vector<AttentionImpl>& attention_impls() {
  static const std::vector<AttentionImpl> table{
      {.name = "host", .help = "blocked two-pass softmax over OpenBLAS (fp32, fp64); the CI implementation",
       .backends = {"host"},
       .make_op = [](const AttentionProblem& p, const std::string& regime, std::shared_ptr<LibraryContext>) {
         return make_host_attention(p, regime);
       }},
#if defined(GPUCAL_HAVE_CUDNN)
      {.name = "cudnn", .help = "cuDNN's fused SDPA through the backend graph API", .backends = {"cuda"},
       .needs = registry::needs::kCudnn, .make_context = make_cudnn_context, .make_op = make_cudnn_attention},
#else
      {.name = "cudnn", .help = "cuDNN's fused SDPA through the backend graph API", .backends = {"cuda"},
       .needs = registry::needs::kCudnn, .missing = "this build has no cuDNN (CUDA or cuDNN not found at configure time)"},
#endif
#if defined(GPUCAL_HAVE_FLASH_CUDA) || defined(GPUCAL_HAVE_FLASH_HIP)
      {.name = "flash", .help = "gpucal's portable FlashAttention-2-style kernel (flash_kernels.cuh)",
       .backends = {"cuda", "hip"}, .needs = registry::needs::kCudaOrHip,
       .make_op = [](const AttentionProblem& p, const std::string& regime, std::shared_ptr<LibraryContext>) {
         return make_flash_attention(p, regime);
       }},
#else
      {.name = "flash", .help = "gpucal's portable FlashAttention-2-style kernel (flash_kernels.cuh)",
       .backends = {"cuda", "hip"}, .needs = registry::needs::kCudaOrHip, .missing = "this build has no CUDA or HIP backend"},
#endif
  };
  return table;
}

std::string attention_impls_table(bool markdown) {
  std::vector<registry::ImplRow> rows;
  for (const AttentionImpl& impl : attention_impls()) rows.push_back(registry::impl_row(impl, backends_text(impl)));
  return registry::impl_table(rows, markdown);
}

std::vector<const AttentionImpl*> resolve_attention_impls(const std::string& spec, const Backend& backend) {
  std::vector<const AttentionImpl*> out;
  if (spec == "auto") {  // the backend's implementations this build has
    for (const AttentionImpl& impl : attention_impls())
      if (runs_on(impl, backend.name()) && impl.missing.empty()) out.push_back(&impl);
    if (out.empty()) throw UsageError("no attention implementation for the " + backend.name() + " backend in this build");
  } else {
    for (const auto& name : parse_word_list(spec, "impl", registry::names(attention_impls())))
      out.push_back(registry::find(attention_impls(), name));
  }
  for (const AttentionImpl* impl : out) {  // every name is checked before any library is loaded
    if (!runs_on(*impl, backend.name()))
      throw UsageError("--impl " + std::string(impl->name) + " needs --backend " + backends_text(*impl) +
                       " (this run's backend is " + backend.name() + ")");
    if (!impl->missing.empty()) throw UsageError("--impl " + std::string(impl->name) + ": " + std::string(impl->missing));
  }
  return out;
}

const AttentionImpl& default_attention_impl(const Backend& backend) {
  for (const AttentionImpl& impl : attention_impls())
    if (runs_on(impl, backend.name()) && impl.missing.empty()) return impl;
  throw UsageError("no attention implementation for the " + backend.name() + " backend in this build");
}

}  // namespace gpucal::attention
