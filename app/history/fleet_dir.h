// A fleet folder as `gpucal fleet run` leaves it:
//   fleet.json        the manifest: nodes and their status (ok, failed, hung, timed out), the
//                     link schedule, every step with its command, exit code and time
//   nodes/<host>/     the single-node suite of each node (a `gpucal run` results folder)
//   links/<a>--<b>/   the pair measurements of the link phase (p2p.csv, collectives.csv)
//   fleet/            the whole-allocation collectives; fleet/groups/<g>/ the disjoint groups
// A folder with nodes/ only (results gathered by hand) reads too: every node is then "ok".
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/report/node_metrics.h"

namespace gpucal::fleet {

constexpr int kFleetSchemaVersion = 1;

std::string link_folder_name(const std::string& a, const std::string& b);  // "a--b"

struct NodeResults {
  std::string name;
  std::string status = "ok";  // ok | failed | hung | timed out | no results
  std::string detail;
  MetricSet metrics;
  RunIdentity identity;
  std::string load_error;  // why nodes/<name> could not be read
  // nodes/<name>.health.json (gpucal check --health in the node phase): its verdict (pass | fail |
  // nothing checked; "" where the node has none) and the first failure.
  std::string health, health_reason;
};

struct PairResults {
  std::string a, b;
  MetricSet metrics;
  std::string status = "ok";  // ok | failed | timed out | not measured
  std::string detail;
};

struct GroupResults {
  std::string name;  // "fleet" for the whole allocation, else the group's folder name
  std::vector<std::string> nodes;
  MetricSet metrics;
};

struct FleetDir {
  std::string path;
  Statistic statistic = Statistic::median;
  nlohmann::json manifest;  // null when fleet.json is absent
  std::vector<NodeResults> nodes;  // in the manifest's order, then nodes/ folders by name
  std::vector<PairResults> pairs;
  std::vector<GroupResults> groups;
  std::vector<std::string> warnings;
  const NodeResults* find(const std::string& name) const;
};

// Whether the run measured its nodes (fleet run --phases without node does not: its nodes are no
// finding for lacking results). Manifests that do not list their phases ran them all.
bool node_phase_ran(const nlohmann::json& manifest);

// Throws std::invalid_argument when `path` is not a folder or holds neither fleet.json nor nodes/.
FleetDir load_fleet_dir(const std::string& path, Statistic statistic = Statistic::median);

// The manifest while a run goes: written whole (atomically) after every step.
class Manifest {
 public:
  explicit Manifest(std::string path);
  nlohmann::json& doc() { return doc_; }
  void save() const;
  // The node entry (created in order when absent).
  nlohmann::json& node(const std::string& name);
  void add_step(nlohmann::json step);

 private:
  std::string path_;
  nlohmann::json doc_;
};

}  // namespace gpucal::fleet
