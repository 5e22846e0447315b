// bench_gemm: shape-swept GEMM throughput with verification, algorithm provenance and the
// annotations that explain each figure (roofline, tiles and waves, best of the run).
// Axes: --m --n --k --batch (range syntax: 64:16384:x2, 256:4096:+256, lists 1024,4096),
//       --dtype fp64,fp32,tf32,fp16,bf16,fp8_e4m3,fp8_e5m2,int8  --out-dtype  --layout NN,NT,TN,TT
//       --alpha --beta, or --shapes FILE.csv (columns m,n,k and optionally batch,dtype,layout),
//       or --set square|llm|deepbench|align (--list prints a set's shapes without running).
// Algorithm: --algo heuristic (default) | autotune, --autotune N; --workspace BYTES.
// Regimes: --regime cold (flush, default) | hot; --rotate (cold-rotate); --graph N (graph).
// Or --model NAME|--model-config FILE with the layout flags (--tp --pp --dp --cp --ep --sp --seq
// --micro-batch ...): the GEMMs one training step runs on one rank (core/model/).
// Example: bench_gemm --backend cuda --dtype bf16 --set llm --layout TN --autotune 8 --out gemm.csv
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <optional>

#include "bench_gemm/gemm_impls.h"
#include "bench_gemm/gemm_sets.h"
#include "core/output/csv_sink.h"
#include "core/output/result_columns.h"
#include "core/driver/driver.h"
#include "bench_gemm/gemm_shapes_file.h"
#include "core/errors.h"
#include "core/output/file_io.h"
#include "core/driver/flag_checks.h"
#include "core/model/model_options.h"
#include "core/driver/sweep.h"
#include "core/registry/registry.h"

namespace {

using namespace gpucal;
using namespace gpucal::gemm;

struct GemmOptions {
  std::string m = "1024", n = "1024", k = "1024", batch = "1";
  std::string dtype = "fp32", out_dtype = "auto", layout = "NN", impl = "auto", shapes, set;
  double alpha = 1.0, beta = 0.0;
  int64_t workspace_bytes = -1;  // -1: 32 MiB on Hopper, 4 MiB elsewhere
  std::string algo;  // empty: heuristic, or autotune when --autotune N is given
  int autotune = 0;  // 0: not given
  bool rotate = false;
  int graph = 0;
  bool list = false;
};



std::vector<ShapeSpec> shapes_from(const GemmOptions& o) {
  std::vector<ShapeSpec> out;
  const auto dtypes = parse_dtype_list(o.dtype);
  const auto layouts = parse_word_list(o.layout, "layout", {"NN", "NT", "TN", "TT"});
  const auto bs = parse_axis(o.batch, "batch", {.min = 1});
  if (!o.shapes.empty()) return read_shapes_file(o.shapes, dtypes.front(), layouts.front());
  std::vector<SetShape> dims;
  if (!o.set.empty()) {
    dims = find_shape_set(o.set).shapes;
  } else {
    for (int64_t k : parse_axis(o.k, "k", {.min = 1}))
      for (int64_t n : parse_axis(o.n, "n", {.min = 1}))
        for (int64_t m : parse_axis(o.m, "m", {.min = 1})) dims.push_back({m, n, k, ""});
  }
  for (DType t : dtypes)
    for (const auto& l : layouts)
      for (int64_t b : bs)
        for (const auto& d : dims) out.push_back({d.m, d.n, d.k, b, t, l, d.note});
  return out;
}

// --set NAME --list (or --list alone: the grid from the axes): dimensions, no run.
void print_shapes(const GemmOptions& o) {
  if (!o.set.empty()) {
    const ShapeSet& s = find_shape_set(o.set);
    std::cout << "# set " << s.name << ": " << s.description << "\n";
  }
  std::cout << "m,n,k,batch,dtype,layout,flops,note\n";
  for (const auto& s : shapes_from(o))
    std::cout << s.m << "," << s.n << "," << s.k << "," << s.batch << "," << to_string(s.dtype) << "," << s.layout
              << "," << format_number(2.0 * s.m * s.n * s.k * s.batch) << "," << csv_escape(s.note) << "\n";
}

GemmRunOptions run_options(const GemmOptions& o, const RunConfig& config, size_t workspace) {
  const std::string algo = o.algo.empty() ? (o.autotune > 0 ? "autotune" : "heuristic") : o.algo;
  if (algo != "heuristic" && algo != "autotune")
    throw UsageError("--algo: expected heuristic or autotune, got '" + o.algo + "'");
  if (algo == "heuristic" && o.autotune > 0)
    throw UsageError("--algo heuristic takes the library's first choice; --autotune N implies --algo autotune");
  if ((o.rotate || o.graph > 0) && config.measure.cold)
    throw UsageError(std::string(o.rotate ? "--rotate" : "--graph") +
                     " replaces the cache flush with back-to-back launches; it cannot be combined with --regime cold");
  GemmRunOptions r;
  r.autotune = algo == "autotune" ? (o.autotune > 0 ? o.autotune : 8) : 0;
  r.rotate = o.rotate;
  r.graph_launches = o.graph;
  r.workspace_bytes = workspace;
  r.best = std::make_shared<BestSoFar>();
  return r;
}

std::optional<DType> parse_out_dtype(const std::string& spec) {
  if (spec == "auto") return std::nullopt;
  if (spec.find(',') != std::string::npos) throw UsageError("--out-dtype: one dtype, got '" + spec + "'");
  return parse_dtype_list(spec, "out-dtype").front();
}

// The run's problems: the model's GEMMs (--model), or the axes, shapes file or set.
std::vector<GemmProblem> problems_from(const GemmOptions& o, const model::ModelOptions& from_model,
                                       std::optional<DType> out_dtype) {
  std::vector<GemmProblem> problems;
  if (from_model.active()) {
    for (const auto& g : from_model.groups())
      problems.push_back(make_problem(g.op.dtype, g.op.gemm.layout, g.op.gemm.m, g.op.gemm.n, g.op.gemm.k,
                                      g.op.gemm.batch, 1.0, g.op.gemm.beta, g.op.gemm.out_dtype));
    return problems;
  }
  for (const auto& s : shapes_from(o))
    problems.push_back(make_problem(s.dtype, s.layout, s.m, s.n, s.k, s.batch, o.alpha, o.beta, out_dtype));
  return problems;
}

// --rotate and --graph time back-to-back launches: unless --regime was given, they select the
// hot measurement loop (the sidecar's command line shows the added flag).
std::vector<char*> with_implied_regime(int argc, char** argv, std::string& storage) {
  std::vector<char*> args(argv, argv + argc);
  bool wants = false, has_regime = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    wants = wants || a == "--rotate" || a == "--graph" || a.rfind("--graph=", 0) == 0;
    has_regime = has_regime || a == "--regime" || a.rfind("--regime=", 0) == 0;
  }
  if (wants && !has_regime) {
    storage = "--regime=hot";
    args.push_back(storage.data());
  }
  return args;
}

// Closing --help.
const std::vector<std::pair<std::string, std::string>> kExamples = {
    {"bench_gemm --backend host --m 256:2048:x2 --n 1024 --k 1024 --out gemm.csv",
     "OpenBLAS over a sweep of M, verified, one CSV row per shape"},
    {"bench_gemm --backend cuda --dtype bf16 --set llm --layout TN --autotune 8 --out gemm.csv",
     "the LLM shape set on cuBLASLt, the heuristic's top 8 algorithms timed"},
    {"bench_gemm --set llm --list",
     "print a set's shapes without running"},
};

}  // namespace

int main(int argc, char** argv) {
  GemmOptions opt;
  std::shared_ptr<LibraryContext> library;  // created once per run, shared by every point
  std::shared_ptr<BestSoFar> best;
  model::ModelOptions from_model({.bench = "gemm",
                             .replaced_flags = {"--m", "--n", "--k", "--batch", "--shapes", "--set", "--layout",
                                                "--alpha", "--beta", "--out-dtype"}});
  BenchSpec spec;
  spec.bench = "gemm";
  spec.description = "bench_gemm: GEMM throughput across shapes, dtypes, layouts and algorithms, verified against references";
  spec.examples = kExamples;
  spec.list_impls = gemm_impls_table;
  spec.columns = gemm_columns();
  spec.add_options = [&](CLI::App& app) {
    auto* m = app.add_option("--m", opt.m, "rows of op(A) and D")->capture_default_str();
    auto* n = app.add_option("--n", opt.n, "columns of op(B) and D (alignment sweep: --n 4096:4352:+8)")->capture_default_str();
    auto* k = app.add_option("--k", opt.k, "inner dimension")->capture_default_str();
    app.add_option("--batch", opt.batch, "strided batch count")->capture_default_str();
    app.add_option("--dtype", opt.dtype, "fp64, fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8 (list)")->capture_default_str();
    app.add_option("--out-dtype", opt.out_dtype, "auto, or the output type: bf16/fp16/fp32 for fp8, fp32 for fp16/bf16")
        ->capture_default_str();
    app.add_option("--layout", opt.layout, "NN, NT, TN, TT (list; column-major op(A) op(B))")->capture_default_str();
    add_number(app, "--alpha", opt.alpha, "scale of A*B")->capture_default_str();
    add_number(app, "--beta", opt.beta, "scale of C (beta != 0 also reads C)")->capture_default_str();
    auto* shapes = app.add_option("--shapes", opt.shapes, "CSV of shapes (m,n,k[,batch,dtype,layout]) instead of the axes");
    auto* set = app.add_option("--set", opt.set, "built-in shape set: square, llm, deepbench, align");
    set->excludes(m)->excludes(n)->excludes(k)->excludes(shapes);
    app.add_flag("--list", opt.list, "print the shapes (of --set, or of the axes) and exit without running");
    app.add_option("--impl", opt.impl, "auto (the backend's first library below) or one of:\n" + registry::help_lines(gemm_impls()))
        ->capture_default_str();
    add_number(app, "--workspace", opt.workspace_bytes, "library workspace bytes (default: the library's, 32 MiB on Hopper, 4 MiB elsewhere)",
               {.min = 0, .max = 1099511627776.0});
    app.add_option("--algo", opt.algo, "heuristic (the library's first choice; default) or autotune");
    add_number(app, "--autotune", opt.autotune, "time the heuristic's top N candidates, keep the fastest (default N 8)",
               {.min = 1, .max = 1024});
    app.add_flag("--rotate", opt.rotate, "cold-rotate regime: cycle over copies of A/B(/C) exceeding 2x L2 instead of flushing");
    add_number(app, "--graph", opt.graph, "graph regime: time a CUDA/HIP graph replaying N launches", {.min = 1, .max = 100000});
  };
  spec.before_run = [&](const RunConfig&) {
    if (!opt.list) return false;
    print_shapes(opt);
    return true;
  };
  spec.make_ops = [&](Backend& backend, const RunConfig& config) {
    const GemmImpl& impl = resolve_gemm_impl(opt.impl, backend);
    const size_t workspace =
        opt.workspace_bytes >= 0 ? static_cast<size_t>(opt.workspace_bytes) : impl.default_workspace(backend);
    const GemmRunOptions run = run_options(opt, config, impl.make_context ? workspace : 0);
    best = run.best;
    const std::optional<DType> out_dtype = parse_out_dtype(opt.out_dtype);
    if (impl.make_context) library = impl.make_context(backend, workspace);
    std::vector<std::unique_ptr<Op>> ops;
    for (const GemmProblem& p : problems_from(opt, from_model, out_dtype))
      ops.push_back(impl.make_op(p, config.regime, run, library));
    return ops;
  };
  spec.add_metadata = [&](Metadata& meta, Backend&) {
    if (library) meta.add_library(opt.impl == "auto" ? "gemm_library" : opt.impl, library->version());
  };
  // The best GEMM of each dtype, known only at the end: a summary beside the CSV, written with
  // its complete rows (rows already written carry efficiency_vs_best_so_far).
  spec.summary_files = [&] {
    return best && !best->entries().empty() ? Summaries{{".best.csv", best->csv_text()}} : Summaries{};
  };
  from_model.attach(spec);
  std::string implied;
  std::vector<char*> args = with_implied_regime(argc, argv, implied);
  return bench_main(static_cast<int>(args.size()), args.data(), spec);
}
