// bench_step: one training step's operations on one rank, run for real as one timed sequence
// (the check of `gpucal predict`): the GEMMs, attention calls, memory-bound ops and the tensor-
// parallel (and any other) collectives whose group this run's ranks can form, each launched
// calls_per_step times in derivation order, timed end to end by the harness (warm-up, many
// samples, median with p10/p90, max across ranks).
// Implementations: host = OpenBLAS GEMMs, host attention, bench_memory's host ops, MPI
// collectives; cuda = cuBLASLt, cuDNN attention (flash where cuDNN is absent), our memory
// kernels, NCCL; hip = hipBLASLt, flash, our kernels, RCCL.
// Axes: the model and layout flags of every bench (--model/--model-config, --tp, --seq, ...).
// Example (Llama-3 8B shrunk, one layer, TP 2 over two MPI ranks):
//   mpirun -np 2 bench_step --backend host --model llama3-8b --scale 8 --layers 1 --seq 512 --tp 2
//     --out results/step.csv   (one command line)
// Then `gpucal predict results --model ... (same flags)` reports predicted / measured.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <thread>

#include "bench_attention/attention_impls.h"
#include "bench_attention/attention_problem.h"
#include "bench_collectives/collective_op.h"
#include "bench_gemm/gemm_impls.h"
#include "bench_gemm/gemm_problem.h"
#include "bench_memory/cache_levels.h"
#include "bench_memory/memory_impls.h"
#include "bench_memory/memory_op.h"
#include "bench_step/step_op.h"
#include "core/backend/backend.h"
#include "core/world/comm.h"
#include "core/errors.h"
#include "core/model/model_flags.h"
#include "core/model/model_options.h"
#include "core/world/world.h"

using namespace gpucal;

namespace {

struct Libraries {
  std::shared_ptr<gemm::LibraryContext> gemm;
  std::shared_ptr<attention::LibraryContext> attention;
  std::shared_ptr<memory::RunContext> memory;
};

// The backend's GEMM library with its default workspace, as bench_gemm --impl auto runs it.
std::unique_ptr<Op> gemm_op(const model::ModelOp& op, Backend& backend, const RunConfig& config, Libraries& libs) {
  const auto& g = op.gemm;
  const gemm::GemmProblem p = gemm::make_problem(op.dtype, g.layout, g.m, g.n, g.k, g.batch, 1.0, g.beta, g.out_dtype);
  const gemm::GemmImpl& impl = gemm::resolve_gemm_impl("auto", backend);
  gemm::GemmRunOptions run;
  if (impl.make_context) {
    run.workspace_bytes = impl.default_workspace(backend);
    if (!libs.gemm) libs.gemm = impl.make_context(backend, run.workspace_bytes);
  }
  return impl.make_op(p, config.regime, run, libs.gemm);
}

std::unique_ptr<Op> attention_op(const model::ModelOp& op, Backend& backend, const RunConfig& config, Libraries& libs) {
  const auto& a = op.attention;
  const attention::AttentionProblem p =
      attention::make_problem(op.dtype, attention::parse_pass(a.pass), attention::FlopConvention::fa2, "BSHD", a.batch,
                              a.heads, a.kv_heads, a.seq_q, a.seq_kv, a.head_dim, a.causal);
  const attention::AttentionImpl& impl = attention::default_attention_impl(backend);
  if (impl.make_context && !libs.attention) libs.attention = impl.make_context(backend);
  return impl.make_op(p, config.regime, impl.make_context ? libs.attention : nullptr);
}

std::unique_ptr<Op> memory_op(const model::ModelOp& op, Backend& backend, const RunConfig& config, Libraries& libs) {
  using namespace memory;
  const model::MemoryShape& m = op.memory;
  const KernelDesc& k = find_kernel(m.kernel);
  MemoryPoint p{k.id, op.dtype, Dims{0, m.rows, m.cols}};
  if (k.shape == Shape::params) p.dims = Dims{m.params, 0, 0};
  if (k.family == Family::stream) p.dims = Dims{m.bytes / static_cast<int64_t>(dtype_bytes(op.dtype)), 0, 0};
  if (!libs.memory) {
    libs.memory = std::make_shared<RunContext>();
    libs.memory->caches = cache_levels(backend.info());
    libs.memory->llc_bytes = last_level_bytes(libs.memory->caches);
  }
  if (backend.is_host())
    return std::make_unique<MemoryOp>(p, "host", config.regime, [] { return make_host_impl(); }, libs.memory);
  if (!have_gpu_kernels()) throw UsageError("bench_step: this build has no CUDA or HIP memory kernels");
  return std::make_unique<MemoryOp>(p, "gpucal", config.regime, [&backend] { return make_gpu_impl(backend); },
                                    libs.memory);
}

// The row's layout cells and the point's name.
std::pair<std::vector<std::pair<std::string, std::string>>, std::string> step_identity(const model::Workload& w,
                                                                                      const std::string& backend,
                                                                                      const std::string& regime) {
  const auto& l = w.layout;
  auto num = [](int64_t v) { return std::to_string(v); };
  std::vector<std::pair<std::string, std::string>> cells{
      {"model", w.model.name}, {"tp", num(l.tp)},          {"pp", num(l.pp)},
      {"dp", num(l.dp)},       {"cp", num(l.cp)},          {"ep", num(l.ep)},
      {"sp", l.sp ? "1" : "0"}, {"seq", num(w.facts.seq)}, {"micro_batch", num(l.micro_batch)},
      {"scale", num(l.scale)}, {"layers", num(w.facts.layers_total)}, {"dtype", to_string(l.dtype)}};
  const std::string point = "step/" + backend + "/" + w.model.name + "/tp" + num(l.tp) + "/pp" + num(l.pp) +
                            "/dp" + num(l.dp) + "/cp" + num(l.cp) + (l.sp ? "/sp" : "") + "/seq" +
                            num(w.facts.seq) + "/mb" + num(l.micro_batch) + "/" + to_string(l.dtype) + "/" +
                            regime;
  return {cells, point};
}

// Closing --help.
const std::vector<std::pair<std::string, std::string>> kExamples = {
    {"bench_step --model llama3-8b --tp 2 --dp 2 --scale 8 --out step.csv",
     "one training step's operations on one rank, timed as one sequence"},
    {"mpirun -np 4 bench_step --model-config my_model.json --tp 2 --dp 2 --out step.csv",
     "a model of one's own, with its collectives over 4 ranks"},
    {"bench_step --model llama3-8b --tp 2 --dp 2 --scale 8 --list", "the operations one step runs, in order"},
    {"gpucal predict step/ --model llama3-8b --tp 2 --dp 2 --scale 8 --measure-step",
     "the prediction against this measurement"},
};

// A host core does at most this many FLOP/s (fp32 FMA on two 512-bit units at 4 GHz is 256 G):
// a ceiling, so the time it gives is a floor on the real one.
constexpr double kHostFlopsPerCoreCeiling = 256e9;

// One step must fit the point's sampling budget at least once: a step that even at the ceiling
// rate runs past --max-time-per-point would run for minutes to hours and then be cut. Refused up
// front, with the flags that shrink it. GPUs have no such ceiling here and are not checked.
void check_host_step_fits(const model::Workload& w, double flops, const Backend& backend, const RunConfig& config) {
  if (!backend.is_host()) return;
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  const double floor_s = flops / (cores * kHostFlopsPerCoreCeiling);
  if (floor_s <= config.measure.max_time_s) return;
  char text[512];
  std::snprintf(text, sizeof text,
                "one step of %s (%lld layers, seq %lld) is %.3g FLOP, at least %.3g s on this host's %.0f "
                "core(s) (at most %.3g FLOP/s each), past --max-time-per-point %g s: shrink it with --scale, --layers or "
                "--seq, or raise --max-time-per-point",
                w.model.name.c_str(), static_cast<long long>(w.facts.layers_total), static_cast<long long>(w.facts.seq),
                flops, floor_s, cores, kHostFlopsPerCoreCeiling, config.measure.max_time_s);
  throw UsageError(text);
}

// Before the run: the step must be one bench_step can time; with --list, print it and stop.
bool check_or_list(const model::ModelFlags& flags, const RunConfig& config, bool list) {
  if (!flags.active()) throw UsageError("bench_step needs --model NAME or --model-config FILE");
  const model::Workload w = flags.derive(resolve_backend_name(config.backend, config.device));
  // An fp8 step needs Transformer Engine's scaling around every GEMM, which bench_step does not
  // run: its time would not be the step's.
  if (w.layout.fp8_gemms)
    throw UsageError("--dtype fp8: bench_step times bf16, fp16 or fp32 steps; predict an fp8 step with gpucal predict");
  if (!list) return false;
  model::print_workload(std::cout, w, w.ops);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  model::ModelFlags flags;
  Libraries libs;
  BenchSpec spec;
  spec.bench = "step";
  spec.description = "bench_step: one training step's operations on one rank, run as one timed sequence";
  spec.examples = kExamples;
  spec.columns = {"model", "tp", "pp", "dp", "cp", "ep", "sp", "seq", "micro_batch", "scale", "layers", "dtype",
                  "ops", "launches", "roles_run", "roles_skipped", "flops", "tflops"};
  bool list = false;
  spec.add_options = [&](CLI::App& app) {
    flags.add(app, "");
    app.add_flag("--list", list,
                 "print the step's operations in the order one step runs them, and exit without running (a run leaves "
                 "out the p2p operations and the collectives over groups larger than its ranks)");
  };
  spec.before_run = [&](const RunConfig& config) { return check_or_list(flags, config, list); };
  spec.make_world_ops = [&](Backend& backend, const RunConfig& config, World& world, Watchdog& watchdog,
                            Metadata& meta) {
    const model::Workload w = flags.derive(resolve_backend_name(config.backend, config.device));
    meta.doc()["model"] = model::to_json(w);
    // Distinct shapes per bench, one op each; each derived op points at its shape's entry.
    // Communicators are made in derivation order, the same on every rank.
    const std::string coll_impl = backend.name() == "cuda"  ? "nccl"
                                  : backend.name() == "hip" ? "rccl"
                                  : world.kind() == "threads" ? "shm"
                                                              : "mpi";
    std::shared_ptr<Communicator> parent;
    std::map<int64_t, std::shared_ptr<coll::Group>> groups;
    auto group_of = [&](int64_t n) {
      auto& g = groups[n];
      if (g) return g;
      if (!parent && coll_impl != "mpi" && coll_impl != "shm")
        parent = make_nccl_communicator(std::shared_ptr<World>(&world, [](World*) {}), backend);
      g = coll::make_first_ranks_group(static_cast<int>(n), world, parent, watchdog);
      return g;
    };
    std::vector<step::StepEntry> entries;
    std::map<std::vector<std::pair<std::string, std::string>>, std::size_t> index;
    std::vector<std::pair<std::size_t, int64_t>> sequence;
    std::vector<std::string> run, skipped;
    double flops = 0;
    for (const auto& op : w.ops) {
      const bool comm = op.kind == model::OpKind::collective || op.kind == model::OpKind::p2p;
      if (op.kind == model::OpKind::p2p || (comm && op.comm.group_size > world.size())) {
        skipped.push_back(op.role);  // pipeline neighbours, or a group larger than this run
        continue;
      }
      auto key = op.shape_cells();
      key.insert(key.begin(), {"bench", op.bench()});
      auto it = index.find(key);
      if (it == index.end()) {
        std::unique_ptr<Op> made;
        if (op.kind == model::OpKind::gemm) made = gemm_op(op, backend, config, libs);
        if (op.kind == model::OpKind::attention) made = attention_op(op, backend, config, libs);
        if (op.kind == model::OpKind::memory) made = memory_op(op, backend, config, libs);
        if (op.kind == model::OpKind::collective) {
          coll::CollectivePoint p{coll::parse_collectives(op.comm.collective).front(), coll_impl, op.dtype,
                                  ReduceOp::sum, op.comm.in_place, 0, op.comm.size_bytes, config.regime, false};
          made = std::make_unique<coll::CollectiveOp>(p, group_of(op.comm.group_size));
        }
        it = index.emplace(key, entries.size()).first;
        entries.push_back({std::move(made), op.role});
      } else {
        entries[it->second].roles += "+" + op.role;
      }
      sequence.emplace_back(it->second, op.calls_per_step);
      run.push_back(op.role);
      flops += op.flops() * static_cast<double>(op.calls_per_step);
    }
    check_host_step_fits(w, flops, backend, config);
    const auto [cells, point] = step_identity(w, backend.name(), config.regime);
    std::vector<std::unique_ptr<Op>> out;
    out.push_back(std::make_unique<step::StepOp>(point, backend.name(), cells, std::move(entries), std::move(sequence),
                                                 flops, run, skipped));
    return out;
  };
  return bench_main(argc, argv, spec);
}
