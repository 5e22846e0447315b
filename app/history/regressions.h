// Regressions in the history: a node's latest figure against its rolling baseline, the median of
// its previous `window` ok figures. The threshold is above the measured run-to-run spread:
// max(min_change, k x the robust relative spread of those previous figures), so a noisy metric
// needs a larger drop before it is flagged than a steady one.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/report/node_metrics.h"
#include "app/history/history_db.h"

namespace gpucal::history {

struct RegressionOptions {
  int window = 5;
  int min_history = 3;  // fewer previous figures: no verdict
  double k = 3;
  double min_change = 0.05;
};

struct Trend {
  std::string metric, node, unit;
  fleet::Better better = fleet::Better::higher;
  int history = 0;  // previous ok figures used
  std::optional<double> latest, baseline;
  std::string latest_time, latest_status;
  double spread = 0;     // robust relative spread of the baseline figures (1.4826 MAD / median)
  double threshold = 0;  // relative change that counts
  double change = 0;     // (latest - baseline) / baseline
  bool regression = false;
  std::string note;
};

std::vector<Trend> analyse(const std::map<SeriesKey, std::vector<SeriesPoint>>& series, const RegressionOptions& options);

}  // namespace gpucal::history
