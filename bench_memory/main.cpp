// bench_memory: memory-bound kernels of a training step, and the bandwidth and vector rates
// they are measured against, every point verified against an fp64 host reference.
// Axes (the harness's range/list syntax):
//   --kernel all|stream|vector|ops or names (copy, scale, add, triad, read, fma_chain,
//            layernorm_fwd, ..., adamw_step)   --dtype auto|fp32,bf16,fp16
//   --bytes 4K:256M:x2 (STREAM bytes per array; auto: 4 KiB until every working set is >= 4x the
//            last-level cache)
//   --fma-elements (fma_chain)  --rows (tokens) --cols (hidden/ffn/vocabulary/sequence)
//   --params (AdamW)  or --set llm|quick (fixed shapes; --list prints the points)
//   --impl auto|host|gpucal|cudnn
// Or --model NAME|--model-config FILE with the layout flags (--tp --pp --dp --seq ...): the
// memory-bound operations one training step runs on one rank (core/model/).
// Example: bench_memory --backend cuda --set llm --out memory.csv
//          bench_memory --backend host --kernel stream --dtype fp32 --out stream.csv
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>

#include "bench_memory/memory_impls.h"
#include "bench_memory/memory_op.h"
#include "bench_memory/memory_sets.h"
#include "core/driver/driver.h"
#include "core/errors.h"
#include "core/model/model_options.h"
#include "core/driver/sweep.h"
#include "core/registry/registry.h"

namespace {

using namespace gpucal;
using namespace gpucal::memory;

struct MemoryOptions {
  std::string kernel = "all", dtype = "auto", bytes = "auto", fma_elements = "auto", rows = "4096", cols = "4096";
  std::string params = "16M", set, impl = "auto";
  bool list = false;
  std::vector<CLI::Option*> shape_flags;  // conflict with --set
};

const std::vector<std::string> kColumns = {
    "kernel", "family", "dtype", "rows", "cols", "params", "elements", "array_bytes", "working_set_bytes", "bytes",
    "cache_level", "bandwidth_gbps", "peak_gbps", "copy_gbps", "fraction_of_copy", "copy_reference", "fma_steps",
    "flops", "tflops", "peak_tflops", "peak_source", "efficiency", "verify_method", "verified_elements", "threads",
    "thread_cpus", "engine", "graph_build_ms", "workspace_bytes"};

std::vector<Kernel> kernels_from(const std::string& spec) {
  std::vector<Kernel> out;
  auto add_family = [&](Family f) {
    for (const auto& d : kernel_table())
      if (d.family == f) out.push_back(d.id);
  };
  for (const auto& w : parse_word_list(spec, "kernel")) {
    if (w == "all") {
      for (const auto& d : kernel_table()) out.push_back(d.id);
    } else if (const std::optional<Family> family = family_of_word(w)) {
      add_family(*family);
    } else {
      out.push_back(find_kernel(w).id);
    }
  }
  // Table order (copy first: later rows divide by the copy bandwidth), no repeats.
  std::vector<Kernel> ordered;
  for (const auto& d : kernel_table())
    for (Kernel k : out)
      if (k == d.id) {
        ordered.push_back(k);
        break;
      }
  return ordered;
}

std::vector<DType> dtypes_for(const MemoryOptions& o, Family f) {
  if (o.dtype == "auto")
    return f == Family::vector ? std::vector<DType>{DType::fp32, DType::fp16, DType::bf16}
                               : std::vector<DType>{DType::fp32, DType::bf16};
  std::vector<DType> out;
  for (const auto& w : parse_word_list(o.dtype, "dtype", {"fp32", "fp16", "bf16"})) out.push_back(parse_dtype(w));
  return out;
}

// STREAM's default sweep: 4 KiB to the first power of two at which every selected STREAM
// kernel's working set is at least 4x the last-level cache (read holds one array, copy and scale
// two, add and triad three), where the memory plateau is read.
std::vector<int64_t> auto_stream_bytes(int64_t llc, const std::vector<Kernel>& kernels) {
  int64_t fewest_arrays = 0;
  for (Kernel k : kernels)
    if (const KernelDesc& d = kernel_desc(k); d.family == Family::stream) {
      const int64_t arrays = std::max<int64_t>(1, working_set_bytes(d, Dims{1024, 0, 0}, DType::fp32) / 4096);
      fewest_arrays = fewest_arrays ? std::min(fewest_arrays, arrays) : arrays;
    }
  std::vector<int64_t> out;
  const int64_t top = 4 * std::max<int64_t>(llc, int64_t{1} << 20) / std::max<int64_t>(fewest_arrays, 1);
  for (int64_t b = 4096;; b *= 2) {
    out.push_back(b);
    if (b >= top) break;
  }
  return out;
}

// Every point of the sweep, in run order. `llc` sizes the auto STREAM sweep; `host` picks the
// auto fma_chain size.
std::vector<MemoryPoint> points_from(const MemoryOptions& o, int64_t llc, bool host) {
  const auto kernels = kernels_from(o.kernel);
  std::vector<SetPoint> shapes;
  if (!o.set.empty()) {
    for (const CLI::Option* f : o.shape_flags)
      if (f->count() > 0)
        throw UsageError("--set " + o.set + " fixes bytes, fma-elements, rows, cols and params; drop " + f->get_name());
    shapes = named_set(o.set);
  } else {
    const AxisBounds positive{.min = 1};
    const auto bytes =
        o.bytes == "auto" ? auto_stream_bytes(llc, kernels) : parse_axis(o.bytes, "bytes", positive);
    const auto fma = o.fma_elements == "auto" ? std::vector<int64_t>{host ? int64_t{1} << 20 : int64_t{1} << 24}
                                              : parse_axis(o.fma_elements, "fma-elements", positive);
    const auto rows = parse_axis(o.rows, "rows", positive), cols = parse_axis(o.cols, "cols", positive);
    const auto params = parse_axis(o.params, "params", positive);
    for (const auto& d : kernel_table()) {
      if (d.family == Family::stream)
        for (int64_t b : bytes) shapes.push_back({d.id, Dims{}, b});
      else if (d.family == Family::vector)
        for (int64_t n : fma) shapes.push_back({d.id, Dims{n, 0, 0}});
      else if (d.shape == Shape::params)
        for (int64_t p : params) shapes.push_back({d.id, Dims{p, 0, 0}});
      else
        for (int64_t r : rows)
          for (int64_t c : cols) shapes.push_back({d.id, Dims{0, r, c}});
    }
  }
  std::vector<MemoryPoint> out;
  for (Kernel k : kernels) {
    const KernelDesc& d = kernel_desc(k);
    for (DType t : dtypes_for(o, d.family))
      for (const SetPoint& s : shapes) {
        if (s.kernel != k) continue;
        MemoryPoint p{k, t, s.dims};
        if (d.family == Family::stream) {
          const auto e = static_cast<int64_t>(dtype_bytes(t));
          if (s.stream_bytes % e != 0)
            throw UsageError("--bytes: " + std::to_string(s.stream_bytes) + " is not a multiple of " + to_string(t) +
                             "'s " + std::to_string(e) + "-byte element");
          p.dims.n = s.stream_bytes / e;
        }
        if (d.shape == Shape::rows_cols && p.dims.rows > (int64_t{1} << 52) / p.dims.cols)
          throw UsageError("--rows x --cols: " + std::to_string(p.dims.rows) + " x " + std::to_string(p.dims.cols) +
                           " elements is too large");
        if ((k == Kernel::cross_entropy_fwd || k == Kernel::cross_entropy_bwd) && p.dims.cols > INT32_MAX)
          throw UsageError("--cols: a vocabulary above 2^31 - 1 does not fit the int32 targets");
        out.push_back(p);
      }
  }
  return out;
}

// cuDNN offers the normalizations; its rows exist only for those kernels.
bool impl_offers(const MemoryImpl& impl, Kernel k) { return impl.offers == nullptr || impl.offers(k); }

// --model: the step's memory-bound operations on this rank, one point per distinct shape.
std::vector<MemoryPoint> points_from_model(const model::ModelOptions& from_model) {
  std::vector<MemoryPoint> out;
  for (const auto& g : from_model.groups()) {
    const model::MemoryShape& m = g.op.memory;
    const KernelDesc& k = find_kernel(m.kernel);
    MemoryPoint p{k.id, g.op.dtype, Dims{0, m.rows, m.cols}};
    if (k.shape == Shape::params) p.dims = Dims{m.params, 0, 0};
    if (k.family == Family::stream) p.dims = Dims{m.bytes / static_cast<int64_t>(dtype_bytes(g.op.dtype)), 0, 0};
    out.push_back(p);
  }
  return out;
}

void print_list(const std::vector<MemoryPoint>& points, const std::vector<const MemoryImpl*>& impls,
                const std::string& regime) {
  std::printf("# point bytes working_set_bytes\n");
  for (const MemoryImpl* impl : impls)
    for (const auto& p : points)
      if (impl_offers(*impl, p.kernel))
        std::printf("%s %lld %lld\n", p.key(std::string(impl->name), regime).c_str(),
                    static_cast<long long>(bytes_moved(p.desc(), p.dims, p.dtype)),
                    static_cast<long long>(working_set_bytes(p.desc(), p.dims, p.dtype)));
}

void add_options(CLI::App& app, MemoryOptions& o) {
  app.add_option("--kernel", o.kernel, "all, stream, vector, ops, or kernel names (list)")->capture_default_str();
  app.add_option("--dtype", o.dtype, "auto (fp32,bf16; fma_chain fp32,fp16,bf16) or a list of fp32, fp16, bf16")
      ->capture_default_str();
  o.shape_flags = {
      app.add_option("--bytes", o.bytes, "STREAM bytes per array (auto: 4 KiB until every STREAM kernel's working set is >= 4x the last-level cache)")
          ->capture_default_str(),
      app.add_option("--fma-elements", o.fma_elements, "fma_chain elements (auto: 1M on the host, 16M on GPUs)")
          ->capture_default_str(),
      app.add_option("--rows", o.rows, "rows of the row ops (tokens)")->capture_default_str(),
      app.add_option("--cols", o.cols, "cols of the row ops (hidden, ffn, vocabulary, sequence)")
          ->capture_default_str(),
      app.add_option("--params", o.params, "AdamW parameter count")->capture_default_str()};
  app.add_option("--set", o.set, "named shape set: llm, quick (fixes the shape axes)");
  app.add_option("--impl", o.impl, "auto (every implementation of the backend) or a list of:\n" +
                                         registry::help_lines(memory_impls()))
      ->capture_default_str();
  app.add_flag("--list", o.list, "print the points (key, bytes moved, working set) and exit");
  // STREAM and the cache plateaus are back-to-back figures; --regime cold flushes before each sample.
  app.get_option("--regime")->run_callback_for_default()->default_val("hot");
}

// Closing --help.
const std::vector<std::pair<std::string, std::string>> kExamples = {
    {"bench_memory --backend host --kernel stream --dtype fp32 --out stream.csv",
     "STREAM copy/scale/add/triad per cache level"},
    {"bench_memory --backend cuda --set llm --out mem.csv",
     "the memory-bound ops of an LLM step (norms, softmax, AdamW, ...) on a GPU"},
    {"bench_memory --kernel layernorm_fwd,rmsnorm_fwd --rows 4096 --cols 8192 --list",
     "print the points and the bytes each moves"},
};

}  // namespace

int main(int argc, char** argv) {
  MemoryOptions opt;
  std::map<std::string, std::shared_ptr<LibraryContext>> contexts;  // per implementation, shared by its points
  std::shared_ptr<RunContext> run;
  model::ModelOptions from_model({.bench = "memory",
                                  .replaced_flags = {"--kernel", "--bytes", "--fma-elements", "--rows", "--cols",
                                                     "--params", "--set"}});
  BenchSpec spec;
  spec.bench = "memory";
  spec.description =
      "bench_memory: STREAM bandwidth per cache level, vector FMA throughput and the memory-bound ops of a training "
      "step, verified against fp64";
  spec.examples = kExamples;
  spec.list_impls = memory_impls_table;
  spec.columns = kColumns;
  spec.add_options = [&](CLI::App& app) { add_options(app, opt); };
  spec.before_run = [&](const RunConfig& config) {
    // Validates every axis before a backend starts (bad input: one line, exit 2).
    const std::string backend = resolve_backend_name(config.backend, config.device);
    const bool host = backend == "host";
    std::string note;
    int64_t llc = 0;
    if (opt.list && opt.set.empty() && opt.bytes == "auto") {
      try {
        llc = last_level_bytes(cache_levels(make_backend(config.backend, config.device)->info()));
      } catch (const std::exception&) {
        llc = int64_t{50} << 20;
        note = "# no " + backend + " device here: --bytes auto listed for a 50 MiB last-level cache\n";
      }
    }
    const auto points = points_from(opt, llc, host);
    const auto impls = resolve_memory_impls(opt.impl, backend);
    if (!opt.list) return false;
    std::fputs(note.c_str(), stdout);
    print_list(points, impls, config.regime);
    return true;
  };
  spec.make_ops = [&](Backend& backend, const RunConfig& config) {
    run = std::make_shared<RunContext>();
    run->caches = cache_levels(backend.info());
    run->llc_bytes = last_level_bytes(run->caches);
    const auto points =
        from_model.active() ? points_from_model(from_model) : points_from(opt, run->llc_bytes, backend.is_host());
    std::vector<std::unique_ptr<Op>> ops;
    for (const MemoryImpl* impl : resolve_memory_impls(opt.impl, backend.name())) {
      if (!impl->missing.empty()) throw UsageError("--impl " + std::string(impl->name) + ": " + std::string(impl->missing));
      std::shared_ptr<LibraryContext> ctx;
      if (impl->make_context && registry::runs_on(*impl, backend.name()))
        ctx = contexts[std::string(impl->name)] = impl->make_context(backend);
      const ImplFactory factory = [impl, ctx, &backend] { return impl->make(backend, ctx); };
      for (const auto& p : points)
        if (impl_offers(*impl, p.kernel))
          ops.push_back(std::make_unique<MemoryOp>(p, std::string(impl->name), config.regime, factory, run));
    }
    if (ops.empty())
      throw UsageError("--impl " + opt.impl + ": offers none of the selected kernels (cudnn: layernorm and rmsnorm, fwd and bwd)");
    return ops;
  };
  spec.add_metadata = [&](Metadata& meta, Backend& backend) {
    meta.doc()["cache_levels"] = cache_levels_json(run ? run->caches : cache_levels(backend.info()));
    for (const auto& [name, ctx] : contexts) meta.add_library(name, ctx->version());
  };
  from_model.attach(spec);
  return bench_main(argc, argv, spec);
}
