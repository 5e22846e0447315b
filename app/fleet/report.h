// `gpucal fleet report` outputs: Markdown (report.md), a self-contained HTML page with inline SVG
// plots (report.html: a strip plot per node metric, a heatmap of each pair metric), JSON
// (report.json) and JUnit (report.junit.xml: one testcase per node and metric, per pair, per node
// status), and on request the textfile collector's gauges (--prometheus).
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/history/diagnosis.h"
#include "app/report/junit.h"
#include "app/report/prometheus.h"

namespace gpucal::fleet {

std::string report_markdown(const FleetDir& fleet, const Diagnosis& d);
std::string report_html(const FleetDir& fleet, const Diagnosis& d);
nlohmann::json report_json(const FleetDir& fleet, const Diagnosis& d);
std::vector<JUnitCase> report_junit(const FleetDir& fleet, const Diagnosis& d);
// --prometheus (app/fleet/report_prometheus.cpp): gpucal_node_ok and gpucal_link_ok (0 for a
// suspect, failed or hung subject), each node's and pair's figures, the run's start time.
PromText report_prometheus(const FleetDir& fleet, const Diagnosis& d, const std::string& cluster);
// The few lines printed on the console: counts and the suspects.
std::string report_summary(const FleetDir& fleet, const Diagnosis& d);

// Shared by the formats.
std::string suspect_line(const Suspect& s);
std::string verdict_of(const Ranked& r);
std::string deviation_text(const Ranked& r);
std::string better_text(Better b);
// Node names in a pair table, in the fleet's node order.
std::vector<std::string> pair_nodes(const FleetDir& fleet, const MetricTable& pairs);
// A pair table's rows by their two nodes, either order: built once, looked up per cell.
class PairIndex {
 public:
  explicit PairIndex(const MetricTable& pairs);
  const Ranked* find(const std::string& a, const std::string& b) const;

 private:
  std::unordered_map<std::string, const Ranked*> rows_;
};
// The pair matrix (report.md) and heatmap (report.html) are drawn up to these many nodes; beyond,
// the suspect pairs are listed and report.json holds every pair (a 1,024-node matrix is a million
// cells nobody reads).
constexpr std::size_t kMaxMatrixNodes = 32, kMaxHeatmapNodes = 128;

// SVG (report_svg.cpp): a strip plot of one metric's values (suspects red, median line, floor
// dashed), and an N x N heatmap of a pair metric coloured by value / median.
std::string svg_strip_plot(const MetricTable& t);
std::string svg_pair_heatmap(const MetricTable& pairs, const std::vector<std::string>& nodes);

}  // namespace gpucal::fleet
