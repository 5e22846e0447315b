// Regressions in the history: a node's latest figure against its baseline, the median of its
// previous `window` ok figures. The threshold is above the run-to-run spread:
// max(min_change, k x a robust relative spread), so a noisy metric needs a larger drop before it
// is flagged than a steady one. k is chosen for the number of series judged (effective_k), so a
// fleet of thousands of series does not flag a few healthy ones every night by chance. The
// spread is the series' own (from the differences of its successive figures, so a slow drift
// does not widen it) once it has `window` of them, never below the fleet's; before that (from
// its second night on) it is the fleet's: the robust spread of that metric's change since the
// previous night across the nodes (or pairs) of the same run whose figures are ok, or the
// series' own when larger. A node's change is judged less the fleet's median change that night,
// and that shift is a subject of its own ("(fleet)", "(fleet pairs)"): a driver or the room that
// moved every node is one finding, not a thousand.
// Each trend says which (its basis): "5 earlier nights" or "1 earlier night, spread from the fleet
// (6 nodes)". With fewer than `min_fleet` series to take a fleet spread from, a short history
// gives no verdict. With a baseline file (an expectations file, e.g. `fleet baseline` over nights
// the operator trusts), a node's figure of a metric the file has a floor for is judged against
// that floor instead, from its first night: "floor of my_sku.json (6 nodes)".
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
  // The spreads a change must exceed; 0 (auto): as many as keep the expected number of healthy
  // series flagged in one night at kFalseFlagsPerNight across all the series judged (Bonferroni:
  // the two-sided normal tail of each is 0.05 / series), and at least 3. 3.2 for 35 series,
  // 4.6 for 10,000.
  double k = 0;
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
  double k = 0;          // the spreads a change must exceed (effective_k)
  double threshold = 0;  // relative change that counts
  double change = 0;     // (latest - baseline) / baseline
  bool regression = false;
  std::string note;
};

// A baseline file's figures for one node metric: the floor a latest figure must not fall below (rise
// above, for a latency) and the typical value the change is measured from (the floor when none).
struct FileBaseline {
  std::optional<double> typical;
  double floor = 0;
  std::string basis;  // "floor of my_sku.json (6 nodes)"
};

constexpr double kFalseFlagsPerNight = 0.05;
// The subjects of the fleet-wide shift trends (the median change of all nodes, or of all pairs).
inline constexpr const char* kFleetSubject = "(fleet)";
inline constexpr const char* kFleetPairsSubject = "(fleet pairs)";
// The spread_from of a trend judged against a baseline file's floor.
inline constexpr const char* kFromBaselineFile = "baseline file";
// The k a threshold uses for `series` series judged at once (options.k when set).
double effective_k(const RegressionOptions& options, std::size_t series);

// `file`: per metric id, the baseline file's figures node series of that metric are judged against.
std::vector<Trend> analyse(const std::map<SeriesKey, std::vector<SeriesPoint>>& series, const RegressionOptions& options,
                           const std::map<std::string, FileBaseline>& file = {});

}  // namespace gpucal::history
