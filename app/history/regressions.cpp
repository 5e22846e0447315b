#include "app/history/regressions.h"

#include <cmath>
#include <tuple>

#include "app/history/robust_stats.h"

namespace gpucal::history {

namespace {

bool is_pair_subject(const std::string& subject) { return subject.find("--") != std::string::npos; }

// The earlier ok figures of a series, newest first, at most `window`.
std::vector<double> earlier_figures(const std::vector<SeriesPoint>& points, int window) {
  std::vector<double> previous;
  for (std::size_t i = points.size() - 1; i-- > 0 && static_cast<int>(previous.size()) < window;)
    if (points[i].value && points[i].status == "ok") previous.push_back(*points[i].value);
  return previous;
}

// The fleet's prior: per (metric, nodes or pairs, latest run), the median (the night's shift) and
// robust spread of each series' change against its own baseline (the median of its earlier ok
// figures, as it is judged), where the latest figure is ok (a figure the fleet report flagged is
// no sample of run-to-run noise).
struct FleetSpread {
  double shift = 0, spread = 0;
  int count = 0;
};
using FleetKey = std::tuple<std::string, bool, int64_t>;

std::map<FleetKey, FleetSpread> fleet_spreads(const std::map<SeriesKey, std::vector<SeriesPoint>>& series, int window) {
  std::map<FleetKey, std::vector<double>> changes;
  for (const auto& [key, points] : series) {
    if (points.empty() || !points.back().value || points.back().status != "ok") continue;
    const auto baseline = fleet::median(earlier_figures(points, window));
    if (!baseline || *baseline == 0) continue;
    changes[{key.first, is_pair_subject(key.second), points.back().run_id}].push_back(*points.back().value / *baseline - 1);
  }
  std::map<FleetKey, FleetSpread> out;
  for (const auto& [key, c] : changes) {
    const fleet::RobustReference r = *fleet::robust_reference(c);
    out[key] = {r.median, r.sigma, r.count};
  }
  return out;
}

std::string basis_of(const Trend& t, bool pair) {
  std::string basis = std::to_string(t.history) + " earlier night" + (t.history == 1 ? "" : "s");
  if (t.spread_from == "own, at least the fleet's")
    return basis + ", spread at least the fleet's (" + std::to_string(t.fleet_count) + (pair ? " pairs)" : " nodes)");
  if (t.spread_from != "fleet") return basis;
  basis += ", spread from the fleet (" + std::to_string(t.fleet_count) + (pair ? " pairs" : " nodes");
  char shift[48];
  std::snprintf(shift, sizeof shift, ", which moved %+.0f%%", 100 * t.fleet_shift);
  return basis + (std::fabs(t.fleet_shift) >= 0.01 ? shift : "") + ")";
}

// A series' own run-to-run spread, relative to `median`, from the differences of successive figures
// (1.4826 x their median absolute deviation / sqrt 2): a slow drift shifts every difference alike
// and does not widen it, where the spread of the figures themselves would grow with the drift it
// should catch. 0 with fewer than 3 figures.
double own_relative_spread(const std::vector<double>& figures, double median) {
  if (figures.size() < 3 || median == 0) return 0;
  std::vector<double> steps;
  for (std::size_t i = 0; i + 1 < figures.size(); ++i) steps.push_back(figures[i] - figures[i + 1]);
  const auto step = fleet::robust_reference(steps);
  return step ? step->sigma / std::sqrt(2.0) / std::fabs(median) : 0;
}

// The spread the threshold uses: the series' own once `window` earlier figures measure it, else
// the larger of the fleet's prior and what its own few figures show (nullopt: no prior to use).
std::optional<double> spread_for(Trend& t, double own_spread, const FleetSpread* fleet, const RegressionOptions& o) {
  const bool has_fleet = fleet && fleet->count >= o.min_fleet;
  if (has_fleet) {
    // The night's shift is the fleet's (judged as its own subject), not the node's.
    t.fleet_count = fleet->count;
    t.fleet_shift = fleet->shift;
  }
  if (t.history >= o.window) {
    // Its own spread, but never below the fleet's: a median absolute deviation of `window`
    // figures is itself noisy, and a series that looked steady for a few nights is not steadier
    // than its kind.
    t.spread_from = has_fleet && fleet->spread > own_spread ? "own, at least the fleet's" : "own";
    return has_fleet ? std::max(own_spread, fleet->spread) : own_spread;
  }
  if (!has_fleet) return std::nullopt;
  t.spread_from = "fleet";
  return std::max(fleet->spread, t.history >= 3 ? own_spread : 0.0);
}

// A latest figure against the baseline file's floor: the change from its typical value, the floor's
// distance from it the threshold. Its earlier nights do not enter, nor the fleet's shift.
void judge_against_file(Trend& t, const FileBaseline& f) {
  const double base = f.typical.value_or(f.floor);
  t.baseline = base;
  t.spread_from = kFromBaselineFile;
  t.basis = f.basis;
  t.threshold = std::fabs(base - f.floor) / std::fabs(base);
  t.change = (*t.latest - base) / std::fabs(base);
  t.regression = t.better == fleet::Better::higher ? *t.latest < f.floor : *t.latest > f.floor;
}

Trend trend_of(const SeriesKey& key, const std::vector<SeriesPoint>& points, const RegressionOptions& o,
               const std::map<FleetKey, FleetSpread>& fleet, const std::map<std::string, FileBaseline>& file) {
  Trend t;
  t.metric = key.first;
  t.node = key.second;
  const fleet::MetricKind kind = fleet::metric_kind(t.metric);
  t.better = kind.better;
  const SeriesPoint& last = points.back();
  t.unit = last.unit;
  t.latest = last.value;
  t.latest_time = last.time;
  t.latest_status = last.status;
  const std::vector<double> previous = earlier_figures(points, o.window);
  t.history = static_cast<int>(previous.size());
  if (!t.latest) {
    t.note = "latest run has no figure (" + last.status + ")";
    return t;
  }
  if (const auto f = file.find(t.metric); f != file.end() && !is_pair_subject(t.node) && f->second.typical.value_or(f->second.floor) != 0) {
    judge_against_file(t, f->second);
    return t;
  }
  if (t.history < std::max(1, o.min_history)) {
    t.note = "history too short (" + std::to_string(t.history) + " previous ok run(s), " +
             std::to_string(std::max(1, o.min_history)) + " needed)";
    return t;
  }
  const fleet::RobustReference r = *fleet::robust_reference(previous);
  if (r.median == 0) {
    t.note = "baseline is 0";
    return t;
  }
  const auto f = fleet.find({t.metric, is_pair_subject(t.node), last.run_id});
  const std::optional<double> spread =
      spread_for(t, own_relative_spread(previous, r.median), f == fleet.end() ? nullptr : &f->second, o);
  if (!spread) {
    t.note = "history too short (" + std::to_string(t.history) + " previous ok run(s), " + std::to_string(o.window) +
             " to measure its own spread) and no fleet spread (fewer than " + std::to_string(o.min_fleet) +
             (is_pair_subject(t.node) ? " pairs" : " nodes") + " with a previous figure)";
    return t;
  }
  t.baseline = r.median;
  t.spread = *spread;
  t.basis = basis_of(t, is_pair_subject(t.node));
  t.threshold = std::max(o.min_change, o.k * t.spread);
  t.change = (*t.latest - r.median) / std::fabs(r.median);
  // Judged on the fleet's spread, a change the whole fleet shared that night is the night's (load,
  // a driver, the room's temperature), not the node's: the node is judged against the fleet's shift.
  const double own = t.change - t.fleet_shift;
  const double worse = kind.better == fleet::Better::higher ? -own : own;
  t.regression = worse > t.threshold;
  return t;
}

}  // namespace

// The whole fleet's change in the latest night of each metric, as its own subject: a driver, a
// firmware or the room that moved every node is one finding, not a node's (a node is judged on
// its change less this shift). The shift is a median over many series, so --min-change alone is
// its threshold.
void fleet_shift_trends(const std::map<FleetKey, FleetSpread>& fleet, const RegressionOptions& o, std::vector<Trend>& out) {
  std::map<std::pair<std::string, bool>, const std::pair<const FleetKey, FleetSpread>*> latest;
  for (const auto& entry : fleet) {
    const auto& [metric, pair, run] = entry.first;
    auto& slot = latest[{metric, pair}];
    if (!slot || std::get<2>(slot->first) < run) slot = &entry;
  }
  for (const auto& [what, entry] : latest) {
    const FleetSpread& f = entry->second;
    if (f.count < o.min_fleet) continue;
    Trend t;
    t.metric = what.first;
    t.node = what.second ? kFleetPairsSubject : kFleetSubject;
    const fleet::MetricKind kind = fleet::metric_kind(t.metric);
    t.better = kind.better;
    t.unit = kind.unit;
    t.history = 1;
    t.change = f.shift;
    t.spread = f.spread;
    t.threshold = o.min_change;
    t.fleet_count = f.count;
    t.spread_from = "fleet";
    t.basis = "median change of " + std::to_string(f.count) + (what.second ? " pairs" : " nodes") + " that night";
    t.regression = (kind.better == fleet::Better::higher ? -f.shift : f.shift) > o.min_change;
    out.push_back(std::move(t));
  }
}

double effective_k(const RegressionOptions& o, std::size_t series) {
  return o.k > 0 ? o.k : fleet::multiple_test_z(kFalseFlagsPerNight, series, /*two_sided=*/true, 3);
}

std::vector<Trend> analyse(const std::map<SeriesKey, std::vector<SeriesPoint>>& series, const RegressionOptions& o,
                           const std::map<std::string, FileBaseline>& file) {
  const std::map<FleetKey, FleetSpread> fleet = fleet_spreads(series, o.window);
  std::size_t judged = 0;
  for (const auto& [key, points] : series)
    judged += points.size() > 1 && key.first != "node_status" && fleet::metric_kind(key.first).known;
  RegressionOptions with_k = o;
  with_k.k = effective_k(o, judged);
  std::vector<Trend> out;
  for (const auto& [key, points] : series) {
    if (points.empty() || key.first == "node_status" || !fleet::metric_kind(key.first).known) continue;
    out.push_back(trend_of(key, points, with_k, fleet, file));
    out.back().k = with_k.k;
  }
  fleet_shift_trends(fleet, o, out);
  return out;
}

}  // namespace gpucal::history
