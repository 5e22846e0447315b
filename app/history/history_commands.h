// `gpucal history import|show|regressions --history FILE`: record fleet and results folders,
// print each node's trend per metric (and plot it: --html), and flag regressions against the
// rolling baseline (app/history/regressions.h; exit 1 when one is found).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "app/history/diagnosis.h"
#include "app/history/regressions.h"

namespace gpucal::history {

struct ShowOptions {
  std::string history, metric, node, html;
  int last = 10;
};

struct RegressionCommand {
  std::string history, metric, node, junit, json;
  std::string baseline;  // an expectations file whose floors judge node series (app/history/regressions.h)
  std::string prometheus;  // node_exporter textfile collector (.prom): gpucal_regression per node and metric
  RegressionOptions options;
  std::string k_text = "auto";  // --k: auto | a positive number (into options.k)
  std::vector<std::string> ignore_metrics;  // series of these metrics are not judged (nor in the fleet's spread)
};

int run_import(const std::string& history, const std::vector<std::string>& paths, const std::string& cluster,
               const fleet::DiagnosisOptions& options, std::ostream& out);
int run_show(const ShowOptions& options, std::ostream& out);
int run_regressions(const RegressionCommand& command, std::ostream& out);

// The trends of one metric as an SVG line chart, a line per node (history show --html).
std::string svg_trend_chart(const std::string& metric, const std::map<SeriesKey, std::vector<SeriesPoint>>& series);

}  // namespace gpucal::history
