// Which nodes and links of a fleet folder are below what they should do. Every figure is ranked
// against the fleet median with the robust z (app/history/robust_stats.h) and against the floor
// of the node's SKU (expectations/). A figure is an outlier when it is worse than the median by
// both `z_threshold` robust standard deviations and the factor 1 - `min_deviation` (a bandwidth
// below median x 0.9, a latency above median / 0.9): the z alone would flag a 1% difference on a
// quiet fleet (tiny MAD), the factor alone a fleet's normal spread. A figure worse than the median
// by `gross_factor` (a fifth of a bandwidth's median, five times a latency's) is an outlier whatever
// the spread: on a noisy fleet the MAD grows until a node at 5% of its peers scores a z of -3, yet
// no fleet's normal spread is fivefold.
// Links: a node's link capacity is its best pair. A node whose best pair is an outlier has all
// its pairs slow: a node fault. A slow pair between two nodes whose capacities are normal is a
// link fault. Pairs are ranked against the pairs between nodes that are not slow: each slow node
// slows N-1 pairs, which would move the median of all pairs. A node named by any metric explains
// its pairs in every metric. Link steps that failed or timed out are findings of their pair; a
// node in slow or failing pairs with two or more peers is named as the node (a lossy port shows
// in some pairs' latency, some pairs' bandwidth, some steps' failures), not as each link.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/check/expectations.h"
#include "app/history/fleet_dir.h"
#include "app/history/robust_stats.h"

namespace gpucal::fleet {

struct DiagnosisOptions {
  double z_threshold = 3.5;  // at least; raised for the number of figures ranked (outlier_z)
  double min_deviation = 0.10;
  double gross_factor = 5;      // worse than the median by this factor: an outlier whatever the z (0: off)
  std::string expect = "auto";  // auto (by each node's device) | none | an expectations file
  int min_count = 3;            // fewer figures than this: no robust ranking (floors still apply)
  std::vector<std::string> ignore_metrics;  // left out (figures the environment, not the hardware, decides)
  std::string statistic = "median";         // how the fleet folder is read (node_metrics.h): median | best
  bool ignored(const std::string& metric) const;
};

struct Ranked {
  std::string subject;  // node name, or "a--b" for a pair
  double value = 0;
  double z = 0;          // robust z against the table's reference
  double deviation = 0;  // (value - median) / median
  bool outlier = false;  // worse than the reference by both thresholds, or by the gross factor
  bool gross = false;    // worse by the gross factor
  std::optional<bool> meets_floor;
  bool suspect = false;  // outlier or below the floor
};

struct MetricTable {
  std::string metric, unit;
  Better better = Better::higher;
  std::optional<RobustReference> reference;
  double gross_factor = 0;   // the options' (the reason quotes it)
  std::vector<Ranked> rows;  // worst first
  std::optional<double> floor, typical;
  std::string floor_source, typical_source;
};

struct Suspect {
  std::string subject;  // a node, or "a--b" for a link
  std::string kind;     // node | node links | link | hung | failed | timed out | no results | health | group | phase
  std::string metric, unit;
  std::optional<double> value, median;
  std::string reason;
};

struct Diagnosis {
  DiagnosisOptions options;  // z_threshold: the one applied (outlier_z)
  std::size_t figures_ranked = 0;
  std::vector<MetricTable> node_tables;      // one per node metric
  std::vector<MetricTable> capacity_tables;  // one per link metric: each node's best pair
  std::vector<MetricTable> pair_tables;      // one per link metric: each pair
  std::vector<MetricTable> group_tables;     // whole allocation and disjoint groups
  std::vector<Suspect> suspects;
  std::map<std::string, std::string> sku_of_node;  // "" when no expectations matched
  std::vector<std::string> notes;

  std::vector<std::string> suspect_nodes() const;  // every node named by a suspect, in node order
  std::vector<std::string> suspect_links() const;  // "a--b" of link faults
};

Diagnosis diagnose(const FleetDir& fleet, const DiagnosisOptions& options);

// The robust z a figure must pass when `figures` are ranked at once: at least `z_floor`, and high
// enough that noise alone (normal) names kFalseSuspectsPerReport healthy figures per report in
// expectation (Bonferroni, one-sided): 3.5 up to about 200 figures, 4.3 for 7,000, 4.6 for 30,000.
constexpr double kFalseSuspectsPerReport = 0.05;
double outlier_z(double z_floor, std::size_t figures);

// Ranks `values` (subject -> value) against `reference` (their own when nullopt); exposed for tests.
MetricTable rank_metric(const std::string& metric, Better better, const std::map<std::string, double>& values,
                        const std::optional<RobustReference>& reference, const DiagnosisOptions& options);

}  // namespace gpucal::fleet
