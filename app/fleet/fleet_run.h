// `gpucal fleet run OUT_DIR` inside an allocation (app/fleet/launcher.h):
//   node phase   the single-node suite (`gpucal run --suite fleet`) on every node at once, into
//                OUT_DIR/nodes/<host>/
//   link phase   bench_p2p (sendrecv, pingpong) then bench_collectives allreduce over pairs of
//                nodes, one rank per node by default, in the rounds of app/fleet/schedule.h: the
//                pairs of a round at once, into OUT_DIR/links/<a>--<b>/; with --rails R, then
//                bench_p2p --pattern rails over R ranks per node (rank i with rank i: GPU i and
//                its NIC, one rail at a time), into OUT_DIR/links/<a>--<b>/rails/
//   fleet phase  bench_collectives over every node that answers, into OUT_DIR/fleet/, and over
//                disjoint groups at once with --groups G, into OUT_DIR/fleet/groups/g<i>/
// Every step has a timeout. A step that passes it is stopped and its nodes probed (`true` on
// each): a node that does not answer is "hung", reported as such and left out of later steps;
// the others go on. A node phase that outlives the others by far (app/fleet/step_pool.h,
// stragglers) is stopped the same way. Results are written by the benches as they measure, and
// OUT_DIR/fleet.json after every step, so nothing measured is lost.
#pragma once
#include <ostream>
#include <string>

#include "app/history/diagnosis.h"
#include "app/fleet/launcher.h"
#include "app/fleet/step_pool.h"

namespace gpucal::fleet {

// What the link and fleet phases run for a suite (the node phase runs the suite itself).
struct FleetPlan {
  std::string suite;
  std::string link_p2p_args, link_collective_args, fleet_collective_args, link_rails_args;
  double max_time_per_point_s = 0.5;
};
const FleetPlan& find_fleet_plan(const std::string& suite);  // throws std::invalid_argument
// --rails: "auto" or a count 0..1024 (0: none); throws std::invalid_argument naming the flag.
int parse_rails(const std::string& text);  // -1 for auto

struct FleetRunOptions {
  std::string out_dir;
  std::string suite = "fleet";
  std::string backend = "auto";
  std::string launcher_kind = "auto";
  Launcher launcher;
  std::string nodes;             // comma list; empty: the allocation's
  std::string threads;           // node phase: gpucal run --threads (default: all on GPUs, 2 on the host)
  int ranks_per_node = 1;        // link and fleet phases
  std::string rails = "auto";    // link phase: rails per pair; auto: the GPUs per node on GPU nodes, none on CPU nodes
  std::string pattern = "round-robin";
  uint64_t seed = 1;
  int pairs_at_once = 0;         // link phase: a round's pairs in batches of this many (0: all)
  int group_size = 0;            // fleet phase groups; 0: none
  std::string phases = "node,link,fleet";
  double node_timeout_s = 3600, link_timeout_s = 900, fleet_timeout_s = 1800, probe_timeout_s = 30;
  StragglerRule stragglers;
  std::string bin_dir, gpucal_path, cluster;
  // node phase: gpucal check --health first (nodes/<name>.health.json), with these extra arguments
  bool health = true;
  std::string health_args;
  std::vector<std::string> command_line;
};

// Returns 0 when every node answered every step, 1 otherwise (the report then says which).
int run_fleet(const FleetRunOptions& options, std::ostream& log);

}  // namespace gpucal::fleet
