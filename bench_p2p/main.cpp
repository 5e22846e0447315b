// bench_p2p: point-to-point and copy bandwidth and latency, and the all-pairs link map.
// Axes: --pattern sendrecv,bidir,ring,pairs,rails,pingpong,copy  --sizes 1:1G:x4 (bytes per message/copy)
//       copy only: --copy-direction h2d,d2h,d2d,peer (h2h on the host backend)
//                  --engine ce,sm  --memory pinned,pageable (the host side of h2d/d2h)
// Messaging runs over MPI on the host backend and NCCL/RCCL on GPUs, under mpirun/srun.
// --model NAME|--model-config FILE with the layout flags: the pipeline sends/receives (sendrecv)
// and context-parallel ring exchanges (ring) one training step runs on one rank (core/model/).
// Example: mpirun -np 4 bench_p2p --backend host --pattern sendrecv,ring,pairs --sizes 1:64M:x4 --out p.csv
//          bench_p2p --backend cuda --pattern copy --sizes 4K:1G:x4 --out copy.csv
#include <CLI/CLI.hpp>
#include <iostream>

#include "bench_p2p/p2p_op.h"
#include "core/driver/driver.h"
#include "core/errors.h"
#include "core/model/model_options.h"
#include "core/output/result_columns.h"
#include "core/driver/sweep.h"

namespace {

using namespace gpucal;
using namespace gpucal::p2p;

struct P2pOptions {
  std::string pattern = "auto", sizes = "1:1G:x4", copy_direction = "auto", engine = "ce,sm", memory = "pinned,pageable";
};

const std::vector<std::string> kMessaging = {"sendrecv", "bidir", "ring", "pairs", "pingpong"};

bool is_messaging(const std::string& p) { return p != "copy"; }

std::vector<std::string> patterns_from(const P2pOptions& o, int ranks) {
  if (o.pattern == "auto") return ranks > 1 ? kMessaging : std::vector<std::string>{"copy"};
  auto allowed = kMessaging;
  allowed.push_back("rails");  // not in auto: it needs ranks on two nodes
  allowed.push_back("copy");
  return parse_word_list(o.pattern, "pattern", allowed);
}

std::vector<std::unique_ptr<Op>> copy_ops(const P2pOptions& o, const std::vector<int64_t>& sizes, const RunConfig& config,
                                          const std::shared_ptr<P2pContext>& ctx) {
  const bool host = ctx->backend->is_host();
  std::vector<std::string> directions =
      o.copy_direction == "auto" ? (host ? std::vector<std::string>{"h2h"} : std::vector<std::string>{"h2d", "d2h", "d2d", "peer"})
                                 : parse_word_list(o.copy_direction, "copy-direction", {"h2d", "d2h", "d2d", "peer", "h2h"});
  for (const auto& d : directions)
    if (host != (d == "h2h"))
      throw UsageError("--copy-direction " + d + ": " + (host ? "the host backend copies host memory only (h2h)" : "h2h is the host backend's copy; GPUs take h2d, d2h, d2d, peer"));
  const auto engines = parse_word_list(o.engine, "engine", {"ce", "sm", "cpu"});
  const auto memories = parse_word_list(o.memory, "memory", {"pinned", "pageable"});
  std::vector<std::unique_ptr<Op>> ops;
  const int own = ctx->backend->info().index;
  for (const auto& d : directions) {
    if (host) {  // one CPU memcpy path, whatever --engine says
      for (int64_t s : sizes) ops.push_back(make_copy_op(d, "cpu", "pageable", -1, s, config.regime, ctx));
      continue;
    }
    std::vector<int> peers{-1};
    if (d == "peer") {
      peers.clear();
      for (int p = 0; p < ctx->device->device_count(); ++p)
        if (p != own) peers.push_back(p);
    }
    for (const auto& engine : engines) {
      if (engine == "cpu") continue;  // GPUs: ce and sm
      for (const auto& memory : d == "h2d" || d == "d2h" ? memories : std::vector<std::string>{"device"}) {
        if (engine == "sm" && memory == "pageable") continue;  // kernels cannot reach pageable memory
        for (int peer : peers)
          for (int64_t s : sizes) ops.push_back(make_copy_op(d, engine, memory, peer, s, config.regime, ctx));
      }
    }
  }
  return ops;
}

void add_options(CLI::App& app, P2pOptions& o) {
  app.add_option("--pattern", o.pattern,
                 "sendrecv, bidir, ring, pairs, rails, pingpong, copy (list); rails: rank i of one node with rank i "
                 "of the other, both ways, one rail at a time (two nodes, the same ranks on each); auto: sendrecv, "
                 "bidir, ring, pairs and pingpong under several ranks, copy in one process")
      ->capture_default_str();
  app.add_option("--sizes", o.sizes, "bytes per message or copy (range syntax: 1:1G:x4)")->capture_default_str();
  app.add_option("--copy-direction", o.copy_direction,
                 "h2d, d2h, d2d, peer (GPUs) or h2h (host backend); auto: all that apply")
      ->capture_default_str();
  app.add_option("--engine", o.engine, "copy engines on GPUs: ce (copy engine), sm (copy kernel)")->capture_default_str();
  app.add_option("--memory", o.memory, "host memory of h2d/d2h copies: pinned, pageable")->capture_default_str();
  // Messaging figures are back-to-back (hot) by convention (nccl-tests, OSU).
  app.get_option("--regime")->run_callback_for_default()->default_val("hot");
}

// Closing --help.
const std::vector<std::pair<std::string, std::string>> kExamples = {
    {"mpirun -np 2 bench_p2p --pattern sendrecv,pingpong --sizes 1:1G:x4 --out p2p.csv",
     "bandwidth and latency between two ranks"},
    {"bench_p2p --pattern copy --copy-direction h2d,d2h,d2d --out copy.csv",
     "copy bandwidth of one GPU (host backend: h2h)"},
    {"mpirun -np 8 bench_p2p --pattern pairs --sizes 64M --out pairs.csv",
     "every ordered pair of ranks: the pair matrix in the sidecar"},
    {"srun -N 2 --ntasks-per-node 8 bench_p2p --pattern rails --sizes 64M --out rails.csv",
     "GPU i with GPU i across two nodes, one rail at a time: a slow NIC names its rail"},
};

}  // namespace

int main(int argc, char** argv) {
  P2pOptions opt;
  model::ModelOptions from_model(
      {.bench = "p2p", .replaced_flags = {"--pattern", "--sizes", "--copy-direction", "--engine", "--memory"}});
  BenchSpec spec;
  spec.bench = "p2p";
  spec.description = "bench_p2p: point-to-point and copy bandwidth and latency, every transfer validated";
  spec.examples = kExamples;
  spec.columns = p2p_columns();
  spec.default_timeout_s = 300;
  spec.add_options = [&](CLI::App& app) { add_options(app, opt); };
  spec.make_world_ops = [&](Backend& backend, const RunConfig& config, World& world, Watchdog& watchdog, Metadata& meta) {
    // --model: the step's messages (pattern sendrecv or ring) this world can run.
    std::vector<model::OpGroup> steps;
    if (from_model.active()) {
      auto fits = [&](const model::ModelOp& op) -> std::string {
        try {
          check_rank_count(op.comm.collective, world.size());
        } catch (const UsageError& e) {
          return e.what();
        }
        if (op.comm.collective == "ring" && op.comm.group_size != world.size() && world.is_root())
          std::cerr << "bench_p2p: --model: " << op.role << " runs its ring over this run's " << world.size()
                    << " ranks (the layout's cp group has " << op.comm.group_size << ")\n";
        return "";
      };
      steps = from_model.groups_for_world(fits, meta, world.is_root());
    }
    const auto patterns = from_model.active() ? std::vector<std::string>{} : patterns_from(opt, world.size());
    const auto sizes = from_model.active() ? std::vector<int64_t>{} : parse_axis(opt.sizes, "sizes", {.min = 1});
    bool messaging = !steps.empty();
    for (const auto& p : patterns) {
      check_rank_count(p, world.size());
      messaging = messaging || is_messaging(p);
    }
    // Per rank (under --threads, per rank thread): the ops share it.
    auto context = std::make_shared<P2pContext>();
    context->world = &world;
    context->backend = &backend;
    context->device = make_device_ops(backend);
    context->ranks = gather_rank_info(world, backend);
    if (messaging) {
      // The collectives layer's communicator over all ranks: MPI on host memory, NCCL/RCCL
      // on GPUs (ncclSend/ncclRecv, in a group but for pingpong's ordered steps).
      std::shared_ptr<World> group = world.split_first(world.size());
      context->comm = backend.is_host() ? make_host_communicator(group) : make_nccl_communicator(group, backend);
      std::weak_ptr<Communicator> weak = context->comm;
      watchdog.add_abort_hook([weak] {
        if (auto c = weak.lock()) c->abort();
      });
      meta.add_library(context->comm->library(), context->comm->describe());
    }
    // The pairs ops fill meta.doc()["p2p_matrix"] on rank 0 as their rows finish; the driver
    // writes the sidecar again at the end of the run.
    context->metadata = &meta;
    std::vector<std::unique_ptr<Op>> ops;
    for (const auto& step : steps)
      ops.push_back(make_message_op(step.op.comm.collective, 0, 0, step.op.comm.size_bytes, config.regime, context));
    for (const auto& p : patterns) {
      if (p == "copy") {
        for (auto& op : copy_ops(opt, sizes, config, context)) ops.push_back(std::move(op));
      } else if (p == "pairs") {
        for (const Transfer& t : ordered_pairs(world.size()))
          for (int64_t s : sizes) ops.push_back(make_message_op(p, t.src, t.dst, s, config.regime, context));
      } else if (p == "rails") {
        std::vector<int> node_of_rank;
        for (const RankInfo& r : context->ranks) node_of_rank.push_back(r.node);
        for (const Rail& r : rail_pairs(node_of_rank))
          for (int64_t s : sizes) ops.push_back(make_message_op(p, r.a, r.b, s, config.regime, context, r.rail));
      } else {
        for (int64_t s : sizes) ops.push_back(make_message_op(p, 0, 0, s, config.regime, context));
      }
    }
    return ops;
  };
  from_model.attach(spec);
  return bench_main(argc, argv, spec);
}
