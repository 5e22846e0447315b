// The headline figures of one results folder, the ones an operator compares across nodes and
// against a SKU's expectations (expectations/*.json use the same ids):
//   gemm_<dtype>_tflops          bench_gemm at its largest square m = n = k (batch 1), the best
//                                 implementation/layout there (dtype fp8 stands for fp8_e4m3/e5m2)
//   hbm_copy_gbps                 bench_memory copy at its largest array (STREAM convention:
//                                 read + write bytes), the device memory once that exceeds the LLC
//   allreduce_busbw_gbps_n<N>     bench_collectives allreduce on one node, N ranks, largest size
//   allreduce_busbw_gbps_n<N>_nodes<M>   the same over M nodes
//   p2p_bw_gbps, p2p_latency_us   bench_p2p sendrecv at its largest size, pingpong half round trip
//                                 at its smallest, both ranks on one node
//   internode_bw_gbps, internode_latency_us   the same with the ranks on two nodes (one rank per
//                                 node: one GPU and, on rail-optimised clusters, one NIC)
//   rail<I>_bw_gbps               bench_p2p rails at its largest size: rank I of one node with rank
//                                 I of the other, both ways (GPU I and its NIC on each node)
// Only ok rows count, suspect ones included (the operator's verbs read folders with
// allow_suspect: a node whose timings other work preempted is what a fleet check looks for,
// not a row to drop). Each figure is the row's own (from its median time), or with
// Statistic::best from its fastest sample (time_us_min): on an oversubscribed machine other load
// stretches samples at random, while a rate-limited link or a throttled node is slow in every one.
#pragma once
#include <map>
#include <string>

#include "app/common/results_dir.h"

namespace gpucal::fleet {

enum class Better { higher, lower };
std::string to_string(Better b);
Better better_from_string(const std::string& text);  // throws std::invalid_argument

struct Metric {
  std::string id;
  double value = 0;
  std::string unit;
  Better better = Better::higher;
  std::string point;  // the row's point key (the largest/smallest size that gave it)
};

using MetricSet = std::map<std::string, Metric>;

enum class Statistic { median, best };
Statistic statistic_from_string(const std::string& text);  // median | best; throws std::invalid_argument
std::string to_string(Statistic s);

MetricSet metrics_of(const calibration::ResultsDir& results, Statistic statistic = Statistic::median);

// What the sidecars say about where the folder was measured ("" when no sidecar says).
struct RunIdentity {
  std::string device_name, backend, hostname, git_commit, start_time;
};
RunIdentity identity_of(const calibration::ResultsDir& results);

// Unit and direction of a metric id (for ids read back from files); nullopt-like empty unit
// for ids gpucal does not know.
struct MetricKind {
  std::string unit;
  Better better = Better::higher;
  bool known = false;
};
MetricKind metric_kind(const std::string& id);

// Whether `id` is a metric gpucal measures (the ids above, any N and M); check_metric_id throws
// std::invalid_argument "<what>: unknown metric 'x' (did you mean ...? metrics: ...)" otherwise.
bool is_metric_id(const std::string& id);
// The rail a rail<I>_bw_gbps id names; -1 for every other id.
int rail_of(const std::string& id);
void check_metric_id(const std::string& what, const std::string& id);

}  // namespace gpucal::fleet
