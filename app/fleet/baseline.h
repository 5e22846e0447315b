// `gpucal fleet baseline INPUT... --sku NAME -o FILE`: an expectations file (expectations/README.md)
// from N nodes' results, for the SKUs nobody has published: per metric the fleet median as the
// typical value and median - max(k x robust sigma, margin x median) as the floor (+ for
// latencies). INPUT: fleet folders (their nodes/ whose status is ok) or results folders. The
// figures are node figures only (a fleet folder's links/ are not read), read with `statistic` as
// fleet report reads them (median | best): the file records it, and a report that reads the
// other statistic says so. Its floors apply to node metrics, never to a fleet's link pairs.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/report/node_metrics.h"

namespace gpucal::fleet {

struct BaselineOptions {
  std::vector<std::string> inputs;
  std::string sku, name, backend, device_regex, out;
  std::string statistic = "median";  // median | best (node_metrics.h)
  double spread_k = 4;
  double min_margin = 0.05;
  int min_nodes = 3;
};

struct NodeFigures {
  std::string source;  // the folder
  MetricSet metrics;
  RunIdentity identity;
};

// Every node of the inputs (throws std::invalid_argument on an unreadable input).
std::vector<NodeFigures> baseline_inputs(const std::vector<std::string>& inputs, Statistic statistic = Statistic::median);

// Throws std::invalid_argument when fewer than min_nodes nodes have any figure.
nlohmann::json build_baseline(const std::vector<NodeFigures>& nodes, const BaselineOptions& options);

int run_baseline(const BaselineOptions& options, std::ostream& out);

}  // namespace gpucal::fleet
