// bench_collectives: NCCL/RCCL and MPI collectives across sizes, dtypes, ops and rank counts.
// Axes: --collective all|allreduce,allgather,reduce_scatter,broadcast,reduce,alltoall
//       --sizes 8:4G:x2 (S as nccl-tests defines it; arithmetic steps: 1M:1G:+1M)
//       --dtype fp32,fp16,bf16,fp8_e4m3,fp8_e5m2,int32,fp64  --op sum,max,min,avg
//       --in-place 0,1  --root 0  --ranks 2,4,8,all (sub-communicators of the first n ranks)
// Launch: mpirun -np 8 bench_collectives --backend cuda ... (one GPU per rank; srun works alike)
//         bench_collectives --threads all ... (one process, one thread per local GPU)
//         mpirun --oversubscribe -np 4 bench_collectives --backend host ... (MPI on host memory)
// Example: mpirun -np 8 bench_collectives --sizes 8:4G:x2 --ranks 2,4,8 --dtype bf16 --out coll.csv
// --model NAME|--model-config FILE with the layout flags: the collectives one training step runs
// on one rank (TP, DP, ZeRO-3, EP), each on a group of the first n ranks (core/model/).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <set>

#include "bench_collectives/collective_op.h"
#include "core/driver/driver.h"
#include "core/output/csv_sink.h"
#include "core/errors.h"
#include "core/model/model_options.h"
#include "core/output/result_columns.h"
#include "core/driver/sweep.h"

namespace {

using namespace gpucal;
using namespace gpucal::coll;

struct CollOptions {
  std::string collectives = "all", sizes = "8:64M:x2", dtype = "fp32", op = "sum", in_place = "0", root = "0";
  std::string ranks = "all", impl = "auto";
  bool graph = false, nccl_tuning_log = false;
};

// The backend's own library: nccl (cuda), rccl (hip); on the host MPI across processes or
// shm across the threads of --threads.
std::string resolve_impl(const std::string& impl, const Backend& backend, const World& world) {
  const std::string host = world.kind() == "threads" ? "shm" : "mpi";
  const std::string natural = backend.name() == "cuda" ? "nccl" : backend.name() == "hip" ? "rccl" : host;
  if (impl == "auto") return natural;
  if (impl != "nccl" && impl != "rccl" && impl != "mpi" && impl != "shm")
    throw UsageError("--impl: expected auto, nccl, rccl, mpi or shm, got '" + impl + "'");
  if (impl != natural)
    throw UsageError("--impl " + impl + " does not run on the " + backend.name() + " backend" +
                     (world.kind() == "threads" ? " with --threads" : "") + " (use --impl " + natural + ")");
  return impl;
}

std::vector<int> parse_ranks(const std::string& spec, int world_size) {
  std::vector<int> out;
  for (const auto& item : parse_word_list(spec, "ranks")) {
    const int n = item == "all" ? world_size : static_cast<int>(parse_size(item, "ranks", {.min = 1, .max = 1 << 20}));
    if (n > world_size)
      throw UsageError("--ranks " + item + ": this run has only " + std::to_string(world_size) +
                       " rank(s); start more (mpirun -np N or --threads N, one GPU each)");
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

std::vector<bool> parse_placements(const std::string& spec) {
  std::vector<bool> out;
  for (const auto& w : parse_word_list(spec, "in-place", {"0", "1"})) out.push_back(w == "1");
  return out;
}

// Every check that needs no communication, so all ranks reach the same verdict alone.
void validate(const CollOptions& o, const std::vector<DType>& dtypes, const std::vector<int64_t>& sizes,
              const std::vector<int>& ranks, const std::vector<int64_t>& roots) {
  for (DType t : dtypes)
    if (!collective_dtype(t))
      throw UsageError("--dtype " + to_string(t) + ": collectives carry fp64, fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, int32");
  for (int64_t root : roots)
    for (int n : ranks)
      if (root >= n)
        throw UsageError("--root " + std::to_string(root) + " is not a rank of the " + std::to_string(n) +
                         "-rank group (--ranks " + o.ranks + ")");
  // Any positive size runs: it is rounded down per collective as nccl-tests does (the row
  // keeps both sizes); one that rounds to nothing is a recorded skip, never an abort.
  for (int64_t s : sizes)
    if (s <= 0) throw UsageError("--sizes: sizes must be positive");
}

void add_options(CLI::App& app, CollOptions& o) {
  app.get_option("--regime")->default_val("hot");  // collectives: back-to-back, like nccl-tests
  app.get_option("--max-time-per-point")->default_val(0.5);
  app.add_option("--collective", o.collectives, collectives_help())->capture_default_str();
  app.add_option("--sizes", o.sizes,
                 "S in bytes (nccl-tests: allgather/reduce_scatter/alltoall total buffer, each rank's block rounded "
                 "down to 16 B): 8:4G:x2, 1M:1G:+1M")
      ->capture_default_str();
  app.add_option("--dtype", o.dtype, "fp32, fp16, bf16, fp8_e4m3, fp8_e5m2, int32, fp64 (list)")->capture_default_str();
  app.add_option("--op", o.op, "sum, max, min, avg (list; reducing collectives only)")->capture_default_str();
  app.add_option("--in-place", o.in_place, "0 (out of place), 1 (in place), or 0,1")->capture_default_str();
  app.add_option("--root", o.root, "root rank(s) of broadcast and reduce (list)")->capture_default_str();
  app.add_option("--ranks", o.ranks, "group sizes: the first n ranks form a sub-communicator (2,4,8,all)")
      ->capture_default_str();
  app.add_option("--impl", o.impl, "auto, nccl (cuda), rccl (hip), mpi (host under mpirun), shm (host with --threads)")
      ->capture_default_str();
  app.add_flag("--graph", o.graph, "launch each collective from a captured CUDA/HIP graph (nccl/rccl)");
  app.add_flag("--nccl-tuning-log", o.nccl_tuning_log,
               "set NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING with NCCL_DEBUG_FILE beside --out (per host and pid); "
               "rank 0 reads NCCL's algorithm/protocol choices back into nccl_algo, nccl_proto, nccl_choices. "
               "NCCL then writes a line per launch, which slows small messages: use a separate diagnostic run");
}

// Communicators, one per group size, created in the same order on every rank: GPU groups are
// split from one communicator over the whole world (ncclCommSplit).
std::vector<std::shared_ptr<Group>> make_groups(const std::vector<int>& ranks, Backend& backend, World& world,
                                                Watchdog& watchdog, Metadata& meta, bool host) {
  std::shared_ptr<Communicator> parent;
  if (!host) parent = make_nccl_communicator(std::shared_ptr<World>(&world, [](World*) {}), backend);
  std::vector<std::shared_ptr<Group>> groups;
  for (int n : ranks) {
    std::shared_ptr<Group> g = make_first_ranks_group(n, world, parent, watchdog);
    if (g->member()) meta.add_library(g->comm->library(), g->comm->describe());
    groups.push_back(g);
  }
  return groups;
}

// Every point of the axes, group by group (the order every rank takes them in).
std::vector<std::unique_ptr<Op>> sweep_points(const CollOptions& opt, const std::vector<std::shared_ptr<Group>>& groups,
                                              const std::string& impl, const std::string& regime,
                                              const std::shared_ptr<LogTail>& tuning_log) {
  const auto colls = parse_collectives(opt.collectives);
  const auto dtypes = parse_dtype_list(opt.dtype);
  const auto ops = parse_reduce_op_list(opt.op);
  const auto sizes = parse_axis(opt.sizes, "sizes", {.min = 1});
  const auto placements = parse_placements(opt.in_place);
  const auto roots = parse_axis(opt.root, "root", {.min = 0, .max = 1 << 20});
  std::vector<std::unique_ptr<Op>> out;
  for (const auto& g : groups)
    for (const auto* d : colls)
      for (DType t : dtypes)
        for (ReduceOp op : d->reduces() ? ops : std::vector<ReduceOp>{ReduceOp::sum})
          for (int64_t root : d->rooted() ? roots : std::vector<int64_t>{0})
            for (bool ip : placements)
              for (int64_t s : sizes) {
                CollectivePoint p{d, impl, t, op, ip, static_cast<int>(root), s, regime, opt.graph};
                p.tuning_log = tuning_log;
                out.push_back(std::make_unique<CollectiveOp>(p, g));
              }
  return out;
}

// Closing --help.
const std::vector<std::pair<std::string, std::string>> kExamples = {
    {"mpirun -np 8 bench_collectives --sizes 8:4G:x2 --ranks 2,4,8 --dtype bf16 --out coll.csv",
     "nccl-tests-style busbw over groups of 2, 4 and 8 GPUs"},
    {"bench_collectives --threads all --collective allreduce,allgather --out coll.csv",
     "one process, one thread per local GPU, no launcher"},
    {"mpirun --oversubscribe -np 4 bench_collectives --backend host --sizes 8:1M:x4 --out coll.csv",
     "MPI on host memory (CI)"},
};

}  // namespace

int main(int argc, char** argv) {
  CollOptions opt;
  model::ModelOptions from_model(
      {.bench = "collectives", .replaced_flags = {"--collective", "--sizes", "--op", "--in-place", "--root", "--ranks"}});
  BenchSpec spec;
  spec.bench = "collectives";
  spec.description = "bench_collectives: NCCL/RCCL/MPI collectives across sizes and rank counts, validated, nccl-tests busbw";
  spec.examples = kExamples;
  spec.columns = collectives_columns();
  spec.default_timeout_s = 300;
  spec.add_options = [&](CLI::App& app) { add_options(app, opt); };
  // Once per process, before any rank (thread) starts: NCCL reads its environment at init.
  spec.before_run = [&](const RunConfig& config) {
    if (opt.nccl_tuning_log && config.backend != "host" && !config.out.empty()) {
      setenv("NCCL_DEBUG", "INFO", 0);
      setenv("NCCL_DEBUG_SUBSYS", "INIT,TUNING", 0);
      setenv("NCCL_DEBUG_FILE", (sidecar_path(config.out, ".nccl.%h.%p.log")).c_str(), 0);
    }
    return false;
  };
  spec.make_world_ops = [&](Backend& backend, const RunConfig& config, World& world, Watchdog& watchdog, Metadata& meta) {
    // Every axis is checked before a communicator exists (sweep_points reads them again).
    parse_collectives(opt.collectives);
    const auto dtypes = parse_dtype_list(opt.dtype);
    parse_reduce_op_list(opt.op);
    const auto sizes = parse_axis(opt.sizes, "sizes", {.min = 1});
    parse_placements(opt.in_place);
    const auto roots = parse_axis(opt.root, "root", {.min = 0, .max = 1 << 20});
    // --model: the step's collectives whose group this world has (the others are reported).
    std::vector<model::OpGroup> steps;
    std::vector<int> ranks;
    if (from_model.active()) {
      auto fits = [&](const model::ModelOp& op) -> std::string {
        if (op.comm.group_size <= world.size()) return "";
        return "its " + op.comm.group + " group has " + std::to_string(op.comm.group_size) + " ranks, this run " +
               std::to_string(world.size()) + " (mpirun -np N or --threads N)";
      };
      steps = from_model.groups_for_world(fits, meta, world.is_root());
      for (const auto& g : steps)
        if (std::find(ranks.begin(), ranks.end(), g.op.comm.group_size) == ranks.end())
          ranks.push_back(static_cast<int>(g.op.comm.group_size));
    } else {
      ranks = parse_ranks(opt.ranks, world.size());
    }
    const std::string impl = resolve_impl(opt.impl, backend, world);
    const bool host = impl == "mpi" || impl == "shm";
    if (opt.graph && host) throw UsageError("--graph needs nccl or rccl (a GPU backend)");
    if (!from_model.active()) validate(opt, dtypes, sizes, ranks, roots);
    // World rank 0 is rank 0 of every group, the rank NCCL logs its choices on: it reads its
    // own file back into each row's nccl_* cells.
    std::shared_ptr<LogTail> tuning_log;
    if (opt.nccl_tuning_log && !host && world.is_root() && std::getenv("NCCL_DEBUG_FILE"))
      tuning_log = std::make_shared<LogTail>(nccl_debug_file(std::getenv("NCCL_DEBUG_FILE")));
    if (opt.nccl_tuning_log) meta.doc()["nccl_tuning_log"] = std::getenv("NCCL_DEBUG_FILE") ? std::getenv("NCCL_DEBUG_FILE") : "";
    if (tuning_log) meta.doc()["nccl_tuning_log_rank0"] = tuning_log->path();  // read into the rows

    const auto groups = make_groups(ranks, backend, world, watchdog, meta, host);
    std::vector<std::unique_ptr<Op>> out;
    for (const auto& step : steps) {
      const model::ModelOp& op = step.op;
      const size_t gi = static_cast<size_t>(std::find(ranks.begin(), ranks.end(), op.comm.group_size) - ranks.begin());
      CollectivePoint p{parse_collectives(op.comm.collective).front(), impl, op.dtype, ReduceOp::sum, op.comm.in_place,
                        0, op.comm.size_bytes, config.regime, opt.graph};
      p.tuning_log = tuning_log;
      out.push_back(std::make_unique<CollectiveOp>(p, groups[gi]));
    }
    if (from_model.active()) return out;
    for (auto& op : sweep_points(opt, groups, impl, config.regime, tuning_log)) out.push_back(std::move(op));
    return out;
  };
  from_model.attach(spec);
  return bench_main(argc, argv, spec);
}
