// bench_gemm: shape-swept GEMM throughput with verification.
// Axes: --m --n --k --batch (range syntax: 64:16384:x2, 256:4096:+256, lists 1024,4096),
//       --dtype fp64,fp32,tf32,fp16,bf16  --layout NN,NT,TN,TT  --alpha --beta,
//       or --shapes FILE.csv (columns m,n,k and optionally batch,dtype,layout).
// Example: bench_gemm --backend cuda --dtype bf16,fp16 --m 4096,8192 --n 4096,8192 --k 4096,8192 --out gemm.csv
#include <CLI/CLI.hpp>

#include "bench_gemm/gemm_impls.h"
#include "harness/driver.h"
#include "harness/errors.h"
#include "harness/sweep.h"

namespace {

using namespace gpucal;
using namespace gpucal::gemm;

struct GemmOptions {
  std::string m = "1024", n = "1024", k = "1024", batch = "1";
  std::string dtype = "fp32", layout = "NN", impl = "auto", shapes;
  double alpha = 1.0, beta = 0.0;
  int64_t workspace_bytes = -1;  // -1: 32 MiB on Hopper, 4 MiB elsewhere
};

const std::vector<std::string> kColumns = {
    "dtype", "compute_type", "math_type", "out_dtype", "layout", "m", "n", "k", "batch", "alpha", "beta",
    "flops", "flop_convention", "bytes", "arith_intensity_flop_per_byte", "tflops", "peak_tflops", "peak_source",
    "efficiency", "achieved_gbps", "roofline_bound", "roofline_time_us", "algo", "algo_source", "workspace_bytes",
    "waves"};

std::string resolve_impl(const std::string& impl, const Backend& backend) {
  if (impl != "auto") return impl;
  if (backend.name() == "cuda") return "cublaslt";
  if (backend.name() == "hip") return "hipblaslt";
  return "openblas";
}

struct ShapeSpec {
  int64_t m, n, k, batch;
  DType dtype;
  std::string layout;
};

std::vector<ShapeSpec> shapes_from(const GemmOptions& o) {
  std::vector<ShapeSpec> out;
  if (!o.shapes.empty()) {
    for (const auto& row : read_points_file(o.shapes)) {
      ShapeSpec s{0, 0, 0, 1, parse_dtype_list(o.dtype).front(), parse_word_list(o.layout, "layout").front()};
      for (const auto& [col, val] : row) {
        if (col == "m") s.m = parse_size(val, "shapes m");
        else if (col == "n") s.n = parse_size(val, "shapes n");
        else if (col == "k") s.k = parse_size(val, "shapes k");
        else if (col == "batch") s.batch = parse_size(val, "shapes batch");
        else if (col == "dtype") s.dtype = parse_dtype(val);
        else if (col == "layout") s.layout = val;
      }
      if (!s.m || !s.n || !s.k) throw UsageError("--shapes: every row needs m, n and k");
      out.push_back(s);
    }
    return out;
  }
  const auto ms = parse_axis(o.m, "m"), ns = parse_axis(o.n, "n"), ks = parse_axis(o.k, "k"), bs = parse_axis(o.batch, "batch");
  const auto layouts = parse_word_list(o.layout, "layout", {"NN", "NT", "TN", "TT"});
  for (DType t : parse_dtype_list(o.dtype))
    for (const auto& l : layouts)
      for (int64_t b : bs)
        for (int64_t k : ks)
          for (int64_t n : ns)
            for (int64_t m : ms) out.push_back({m, n, k, b, t, l});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  GemmOptions opt;
  std::shared_ptr<LibraryContext> library;  // created once per run, shared by every point
  BenchSpec spec;
  spec.bench = "gemm";
  spec.description = "bench_gemm: GEMM throughput across shapes, dtypes and layouts, verified against fp64";
  spec.columns = kColumns;
  spec.add_options = [&](CLI::App& app) {
    app.add_option("--m", opt.m, "rows of op(A) and D")->capture_default_str();
    app.add_option("--n", opt.n, "columns of op(B) and D")->capture_default_str();
    app.add_option("--k", opt.k, "inner dimension")->capture_default_str();
    app.add_option("--batch", opt.batch, "strided batch count")->capture_default_str();
    app.add_option("--dtype", opt.dtype, "fp64, fp32, tf32, fp16, bf16 (list)")->capture_default_str();
    app.add_option("--layout", opt.layout, "NN, NT, TN, TT (list; column-major op(A) op(B))")->capture_default_str();
    app.add_option("--alpha", opt.alpha, "scale of A*B")->capture_default_str();
    app.add_option("--beta", opt.beta, "scale of C (beta != 0 also reads C)")->capture_default_str();
    app.add_option("--shapes", opt.shapes, "CSV of shapes (m,n,k[,batch,dtype,layout]) instead of the axes");
    app.add_option("--impl", opt.impl, "auto, openblas, cublaslt, hipblaslt")->capture_default_str();
    app.add_option("--workspace", opt.workspace_bytes, "library workspace bytes (default 32 MiB on Hopper, 4 MiB elsewhere)");
  };
  spec.make_ops = [&](Backend& backend, const RunConfig& config) {
    const auto shapes = shapes_from(opt);
    const std::string impl = resolve_impl(opt.impl, backend);
    const size_t workspace = opt.workspace_bytes >= 0 ? static_cast<size_t>(opt.workspace_bytes)
                             : backend.info().arch.rfind("sm_9", 0) == 0 ? (32u << 20)
                                                                          : (4u << 20);
    if (impl == "cublaslt") {
#if defined(GPUCAL_HAVE_CUDA)
      library = make_cublaslt_context(backend, workspace);
#else
      throw UsageError("--impl cublaslt: this build has no CUDA backend");
#endif
    } else if (impl == "hipblaslt") {
#if defined(GPUCAL_HAVE_HIPBLASLT)
      library = make_hipblaslt_context(backend, workspace);
#else
      throw UsageError("--impl hipblaslt: this build has no hipBLASLt (not found at configure time)");
#endif
    } else if (impl != "openblas") {
      throw UsageError("--impl: expected auto, openblas, cublaslt or hipblaslt, got '" + impl + "'");
    }
    std::vector<std::unique_ptr<Op>> ops;
    for (const auto& s : shapes) {
      GemmProblem p = make_problem(s.dtype, s.layout, s.m, s.n, s.k, s.batch, opt.alpha, opt.beta);
      if (impl == "openblas") ops.push_back(make_host_gemm(p, config.regime));
#if defined(GPUCAL_HAVE_CUDA)
      if (impl == "cublaslt") ops.push_back(make_cublaslt_gemm(p, config.regime, library));
#endif
#if defined(GPUCAL_HAVE_HIPBLASLT)
      if (impl == "hipblaslt") ops.push_back(make_hipblaslt_gemm(p, config.regime, library));
#endif
    }
    return ops;
  };
  spec.add_metadata = [&](Metadata& meta, Backend&) {
    if (library) meta.add_library(opt.impl == "auto" ? "gemm_library" : opt.impl, library->version());
  };
  return bench_main(argc, argv, spec);
}
