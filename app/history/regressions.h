// Regressions in the history: a node's latest figure against its baseline, the median of its
// previous `window` ok figures. The threshold is above the run-to-run spread:
// max(min_change, k x a robust relative spread), so a noisy metric needs a larger drop before it
// is flagged than a steady one. The spread is the series' own (1.4826 MAD / median of its earlier
// figures) once it has `window` of them; before that (from its second night on) the spread is
// not yet measured, and the prior is the fleet's: the robust spread of that metric's change since
// the previous night across the nodes (or pairs) of the same run whose figures are ok, or the
// series' own when larger; the node's change is then judged against the fleet's median change
// that night (a change every node shared is the night's: load, a driver, not the node's).
// Each trend says which (its basis): "5 earlier nights" or "1 earlier night, spread from the fleet
// (6 nodes)". With fewer than `min_fleet` series to take a fleet spread from, a short history
// gives no verdict.
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
  int min_history = 1;  // fewer previous figures: no verdict
  double k = 3;
  double min_change = 0.05;
  int min_fleet = 3;  // series (nodes or pairs) a fleet spread needs
};

struct Trend {
  std::string metric, node, unit;
  fleet::Better better = fleet::Better::higher;
  int history = 0;  // previous ok figures used
  std::optional<double> latest, baseline;
  std::string latest_time, latest_status;
  double spread = 0;     // the relative spread the threshold uses
  std::string spread_from;  // own | fleet
  int fleet_count = 0;      // series the fleet spread came from
  double fleet_shift = 0;   // the fleet's median change that night (spread from the fleet only)
  std::string basis;        // "5 earlier nights", "1 earlier night, spread from the fleet (6 nodes)"
  double threshold = 0;  // relative change that counts
  double change = 0;     // (latest - baseline) / baseline
  bool regression = false;
  std::string note;
};

std::vector<Trend> analyse(const std::map<SeriesKey, std::vector<SeriesPoint>>& series, const RegressionOptions& options);

}  // namespace gpucal::history
