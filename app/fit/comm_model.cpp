#include "app/fit/comm_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "app/common/calibration_schema.h"
#include "app/common/number_text.h"
#include "app/fit/comm_forms.h"
#include "app/fit/comm_interval.h"
#include "core/formulas/collective_formulas.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

std::string key_of(const json& g) {
  return g.value("collective", "?") + "/" + g.value("dtype", "?") + "/n" +
         std::to_string(g.value("nranks", int64_t{0})) + "/rpn" +
         std::to_string(g.value("ranks_per_node", int64_t{0})) + "/nodes" +
         (g.value("nnodes", int64_t{0}) > 0 ? std::to_string(g.value("nnodes", int64_t{0})) : std::string("?"));
}

bool usable(const json& g, const std::string& form) {
  return g.contains(form) && !g[form].contains("error");
}

// The group's best.form when it names one, checked; nullopt when it names none.
std::optional<std::string> named_best_form(const json& g) {
  if (g.contains("best") && g["best"].contains("form") && g["best"]["form"].is_string()) {
    const std::string f = g["best"]["form"];
    // A form gpucal does not fit, or one this group has no usable fit of, is not swapped for
    // another without a word: the file was written by something else, or edited.
    const auto& names = comm_form_names();
    if (std::find(names.begin(), names.end(), f) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw calibration::SchemaError("calibration.json: communication group " + key_of(g) + ": best.form '" + f +
                                  "' is not a form gpucal fits (" + list + "); refit with gpucal fit");
    }
    if (usable(g, f)) return f;
    throw calibration::SchemaError("calibration.json: communication group " + key_of(g) + ": best.form '" + f +
                                "' has no usable fit in the group" +
                                (g.contains(f) && g[f].contains("error") && g[f]["error"].is_string()
                                     ? " (" + g[f]["error"].get<std::string>() + ")"
                                     : std::string()) +
                                "; refit with gpucal fit");
  }
  return std::nullopt;
}

std::string best_form(const json& g) {
  if (const auto named = named_best_form(g)) return *named;
  for (const auto& f : comm_form_names())
    if (usable(g, f)) return f;
  throw std::invalid_argument("group " + key_of(g) + " has no fitted form");
}

// The form that extends beyond the measured sizes: regime (latency and bandwidth terms per
// regime), else alpha_beta, else whatever is best.
std::string extension_form(const json& g) {
  for (const char* f : {"regime", "alpha_beta"})
    if (usable(g, f)) return f;
  return best_form(g);
}

std::pair<double, double> size_range(const json& g) {
  double lo = INFINITY, hi = 0;
  for (const auto& p : g["points"]) {
    lo = std::min(lo, p["size_bytes"].get<double>());
    hi = std::max(hi, p["size_bytes"].get<double>());
  }
  return {lo, hi};
}

bool inside(const json& g, double size) {
  const auto [lo, hi] = size_range(g);
  return size >= lo * (1 - 1e-9) && size <= hi * (1 + 1e-9);
}

// The group's measured times at `size`, ascending (empty when it was not measured).
std::vector<double> measured_times(const json& g, double size) {
  std::vector<double> times;
  for (const auto& p : g["points"])
    if (std::abs(p["size_bytes"].get<double>() - size) <= 1e-9 * size) times.push_back(p["time_us_median"]);
  std::sort(times.begin(), times.end());
  return times;
}

// A 90% interval as log offsets around a time: [t e^-down, t e^up].
struct Band {
  bool has = false;
  double down_log = 0, up_log = 0;
  std::string rule;
};

double group_bus_factor(const json& g) {
  return g.value("bus_factor", 1.0);
}

// A group's own time at `size`: measured, its best form inside its sizes, its extension form
// outside. `form` and `where` say which.
// `band` gets its 90% interval (comm_model.h).
double own_time_us(const json& g, double size, std::string& form, bool& in_range, bool& measured, Band& band) {
  in_range = inside(g, size);
  measured = false;
  if (const std::vector<double> times = measured_times(g, size); !times.empty()) {
    const std::size_t n = times.size();
    const double t = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    form = "measured";
    measured = true;
    band = {true, std::log(t / times.front()), std::log(times.back() / t),
            "the spread of the " + std::to_string(n) + " time(s) measured at this size"};
    return t;
  }
  form = in_range ? best_form(g) : extension_form(g);
  const double t = predict_comm_form(form, g[form], size, group_bus_factor(g));
  const json none;
  const json& interval = g.contains("interval") ? g["interval"] : none;
  const IntervalAt at = interval_at(interval, size, t);
  if (at.computed)
    band = {true, at.halfwidth_log, at.halfwidth_log,
            "the group's conformal 90% interval (" + interval.value("form", std::string("?")) + " residuals, w " +
                significant(at.multiplier, 3) + (in_range ? "" : ", beyond the measured sizes") + ")"};
  else
    band = {false, 0, 0,
            "none: " + (interval.is_object() ? interval.value("reason", std::string("no interval")) :
                                               std::string("the calibration has no interval (fit it again)"))};
  return t;
}

// The regime line (alpha_us, us per bus byte) that covers `bus_bytes` in a group's regime fit,
// with its index and the regime count; nullopt without a regime fit.
struct Line {
  double alpha_us = 0, us_per_bus_byte = 0;
  std::size_t index = 0, count = 1;
};
std::optional<Line> regime_line(const json& g, double bus_bytes) {
  if (!usable(g, "regime")) return std::nullopt;
  const json& segs = g["regime"]["segments"];
  std::size_t pick = segs.size() - 1;
  for (std::size_t s = 0; s < segs.size(); ++s) {
    // A size in a gap belongs to the nearer regime (in log size).
    const double to = segs[s]["to_bus_bytes"];
    if (bus_bytes <= to) {
      pick = s;
      if (s > 0 && bus_bytes < segs[s]["from_bus_bytes"].get<double>()) {
        const double prev_to = segs[s - 1]["to_bus_bytes"], from = segs[s]["from_bus_bytes"];
        if (std::log(bus_bytes / prev_to) < std::log(from / bus_bytes)) pick = s - 1;
      }
      break;
    }
  }
  const json& seg = segs[pick];
  Line l;
  l.alpha_us = seg["alpha_us"];
  l.us_per_bus_byte = seg["beta_gbps"].is_number() ? 1.0 / (seg["beta_gbps"].get<double>() * 1e3) : 0.0;
  l.index = pick;
  l.count = segs.size();
  return l;
}

// The query with nnodes and ranks_per_node both filled; throws std::invalid_argument for a bad one.
CommQuery complete_query(CommQuery q) {
  if (!is_known_collective(q.collective))
    throw std::invalid_argument("unknown collective '" + q.collective + "'");
  if (q.nranks < 2) throw std::invalid_argument("nranks must be >= 2");
  if (!(q.size_bytes > 0)) throw std::invalid_argument("size must be > 0 bytes");
  if (q.nnodes <= 0 && q.ranks_per_node <= 0) throw std::invalid_argument("give nnodes or ranks_per_node");
  if (q.nnodes <= 0) q.nnodes = (q.nranks + q.ranks_per_node - 1) / q.ranks_per_node;
  if (q.ranks_per_node <= 0) q.ranks_per_node = (q.nranks + q.nnodes - 1) / q.nnodes;
  if (q.nnodes * q.ranks_per_node < q.nranks || q.nnodes > q.nranks)
    throw std::invalid_argument(std::to_string(q.nranks) + " ranks do not fit " + std::to_string(q.nnodes) +
                                " node(s) x " + std::to_string(q.ranks_per_node) + " ranks per node");
  return q;
}

// Candidate groups per (nranks, nnodes, ranks_per_node).
using GroupsByShape = std::map<std::tuple<int64_t, int64_t, int64_t>, const json*>;

// The candidates: the collective, the dtype (or the preferred one per rank/node count), the
// tier. Throws, listing the collective's groups, when there is none.
GroupsByShape candidate_groups(const json& groups, const CommQuery& q, bool inter, const std::string& tier) {
  GroupsByShape chosen;
  std::vector<std::string> seen;
  bool nodes_unknown = false;
  for (const json& g : groups) {
    if (g.value("collective", "") != q.collective) continue;
    seen.push_back(key_of(g));
    if (!q.dtype.empty() && g.value("dtype", "") != q.dtype) continue;
    if (g.value("nnodes", int64_t{1}) < 1) {  // imported from a log that names no hosts: no tier
      nodes_unknown = true;
      continue;
    }
    if ((g.value("nnodes", int64_t{1}) > 1) != inter) continue;
    const auto k = std::make_tuple(g.value("nranks", int64_t{0}), g.value("nnodes", int64_t{0}),
                                   g.value("ranks_per_node", int64_t{0}));
    auto rank = [](const json& x) {
      const std::string d = x.value("dtype", "");
      return std::make_pair(d == "fp32" ? 2 : d == "bf16" ? 1 : 0, x["points"].size());
    };
    const json*& current = chosen[k];
    if (!current || rank(g) > rank(*current)) current = &g;
  }
  if (chosen.empty()) {
    std::string have;
    for (const auto& s : seen) have += (have.empty() ? "" : ", ") + s;
    throw std::invalid_argument("no " + tier + " " + q.collective + (q.dtype.empty() ? "" : " " + q.dtype) +
                                " measurements to predict from" +
                                (have.empty() ? "" : " (have: " + have + ")") +
                                "; predictions do not cross link tiers" +
                                (nodes_unknown ? std::string("; a group with nodes? came from a log that names no hosts: ") +
                                                     kNodesUnknownRemedy
                                               : ""));
  }
  return chosen;
}

// 1. The group itself: its time at the size; the time in µs, or nullopt when it was not measured.
std::optional<double> from_own_group(const GroupsByShape& chosen, const CommQuery& q, CommPrediction& out,
                                     Band& band) {
  for (const auto& [k, g] : chosen) {
    if (std::get<0>(k) != q.nranks || std::get<1>(k) != q.nnodes) continue;
    bool in_range = false, measured = false;
    const double t = own_time_us(*g, q.size_bytes, out.form, in_range, measured, band);
    out.groups = {key_of(*g)};
    out.provenance = measured   ? Provenance::measured
                     : in_range ? Provenance::interpolated
                                : Provenance::extrapolated;
    out.method = measured   ? "the measured median at this size"
                 : in_range ? "the group's best form (" + out.form + ") between measured sizes"
                            : "the group's " + out.form + " form beyond its measured sizes";
    if (!measured && !in_range) {
      const auto [lo, hi] = size_range(*g);
      const bool above = q.size_bytes > hi;
      out.extrapolated_by = "x" + significant(above ? q.size_bytes / hi : lo / q.size_bytes, 3) +
                            (above ? " above the largest measured size" : " below the smallest measured size");
    }
    return t;
  }
  return std::nullopt;
}

// The groups to scale from: those with the query's ranks per node when across nodes (the NIC
// share per rank), and a note when there is none.
struct Pool {
  std::vector<const json*> groups;
  std::string rpn_note;
};
Pool scaling_pool(const GroupsByShape& chosen, const CommQuery& q, bool inter) {
  std::vector<const json*> same_rpn, all;
  for (const auto& [k, g] : chosen) {
    all.push_back(g);
    if (std::get<2>(k) == q.ranks_per_node) same_rpn.push_back(g);
  }
  Pool pool{!inter || same_rpn.empty() ? all : same_rpn, ""};
  if (inter && same_rpn.empty())
    pool.rpn_note =
        "; no group has " + std::to_string(q.ranks_per_node) + " ranks per node, bandwidth taken as measured";
  return pool;
}

// 2. Between two measured rank counts: bus bandwidth interpolated in log2 n; the time in µs,
// or nullopt without a measured count on each side.
std::optional<double> between_rank_counts(const Pool& pool, const CommQuery& q, double factor,
                                          const std::string& tier, CommPrediction& out, Band& band) {
  const json *below = nullptr, *above = nullptr;
  for (const json* g : pool.groups) {
    const int64_t n = g->value("nranks", int64_t{0});
    if (n < q.nranks && (!below || n > below->value("nranks", int64_t{0}))) below = g;
    if (n > q.nranks && (!above || n < above->value("nranks", int64_t{0}))) above = g;
  }
  if (!below || !above) return std::nullopt;
  std::string f1, f2;
  bool in1, in2, m1, m2;
  Band b1, b2;
  const double t1 = own_time_us(*below, q.size_bytes, f1, in1, m1, b1);
  const double t2 = own_time_us(*above, q.size_bytes, f2, in2, m2, b2);
  band = {b1.has && b2.has, std::max(b1.down_log, b2.down_log), std::max(b1.up_log, b2.up_log),
          b1.has && b2.has ? "the wider of the two rank counts' intervals" : (b1.has ? b2.rule : b1.rule)};
  const double n1 = below->value("nranks", 2.0), n2 = above->value("nranks", 2.0);
  const double bw1 = q.size_bytes * group_bus_factor(*below) / t1,
               bw2 = q.size_bytes * group_bus_factor(*above) / t2;
  const double u =
      (std::log2(static_cast<double>(q.nranks)) - std::log2(n1)) / (std::log2(n2) - std::log2(n1));
  const double busbw = std::exp((1 - u) * std::log(bw1) + u * std::log(bw2));  // bytes per µs
  out.groups = {key_of(*below), key_of(*above)};
  out.form = f1 == f2 ? f1 : f1 + "+" + f2;
  out.provenance = in1 && in2 ? Provenance::interpolated : Provenance::extrapolated;
  out.method = "bus bandwidth interpolated in log2(ranks) between " + significant(n1, 6) + " and " + significant(n2, 6) +
               " measured ranks (" + tier + ")" + pool.rpn_note;
  return q.size_bytes * factor / busbw;
}

// How the bus bandwidth changes with the group size beyond the measured counts: with a second
// measured count on the same side, the change per octave between the two nearest counts at this
// size (NVSwitch's rises with the group: 232, 290, 386 GB/s for a 512 MiB all-reduce of 2, 4 and
// 8 H100s, XLA's sm_90 table), carried over the octaves beyond and held within x1.5 per octave;
// else none (factor 1: the bandwidth kept).
struct BandwidthTrend {
  bool known = false;
  double factor = 1;  // the query's bus bandwidth / the nearest group's
  std::string other, why;
};

BandwidthTrend bandwidth_trend(const Pool& pool, const json& near, const CommQuery& q, double octaves_beyond) {
  const double n0 = near.value("nranks", 2.0), nq = static_cast<double>(q.nranks);
  const json* second = nullptr;
  for (const json* g : pool.groups) {
    const double n = g->value("nranks", 2.0);
    const bool same_side = (n < n0) == (n0 < nq) && n != n0;
    if (same_side && (!second || std::abs(std::log2(n / n0)) < std::abs(std::log2(second->value("nranks", 2.0) / n0))))
      second = g;
  }
  if (!second || octaves_beyond <= 0) return {};
  std::string f;
  bool in_range, measured;
  Band unused;
  const double n1 = second->value("nranks", 2.0);
  const double bw0 = q.size_bytes * group_bus_factor(near) / own_time_us(near, q.size_bytes, f, in_range, measured, unused);
  const double bw1 =
      q.size_bytes * group_bus_factor(*second) / own_time_us(*second, q.size_bytes, f, in_range, measured, unused);
  const double per_octave = std::clamp(std::pow(bw0 / bw1, 1 / std::abs(std::log2(n0 / n1))), 1 / 1.5, 1.5);
  BandwidthTrend t{true, std::pow(per_octave, octaves_beyond), key_of(*second), ""};
  t.why = "x" + significant(per_octave, 3) + " per octave from " + significant(n1, 6) + " to " + significant(n0, 6) +
          " measured ranks, over " + significant(octaves_beyond, 3) + " octave(s)";
  return t;
}

// Widens `band` (log factors around t) by the gap to `other`, another answer's time, either way:
// an extrapolated trend is as likely to overshoot as to fall short by its own size.
void widen_by_gap(Band& band, double t, double other, const std::string& what) {
  if (!(t > 0) || !(other > 0)) return;
  const double gap = std::abs(std::log(other / t));
  if (gap == 0 && !band.has) return;  // no spread and no trend: no interval, not a zero-width one
  band.up_log = std::max(band.up_log, gap);
  band.down_log = std::max(band.down_log, gap);
  const std::string tail = ", either way";
  const bool listing = band.has && band.rule.size() > tail.size() &&
                       band.rule.compare(band.rule.size() - tail.size(), tail.size(), tail) == 0;
  if (listing)  // one clause naming every answer the interval reaches
    band.rule.insert(band.rule.size() - tail.size(), ", to " + what);
  else
    band.rule = (band.has ? band.rule + "; " : std::string()) + "at least the gap to " + what + tail;
  band.has = true;
}

// 3. Beyond the measured rank counts: the nearest group's regime lines, alpha scaled; the time in µs.
double beyond_rank_counts(const Pool& pool, const CommQuery& q, double factor, const std::string& tier,
                          CommPrediction& out, Band& band) {
  const json* near = nullptr;
  double distance = INFINITY;
  for (const json* g : pool.groups) {
    const double d = std::abs(std::log2(g->value("nranks", 2.0)) - std::log2(static_cast<double>(q.nranks)));
    if (d < distance) {
      distance = d;
      near = g;
    }
  }
  const int64_t n0 = near->value("nranks", int64_t{2});
  const double bus_bytes = q.size_bytes * factor;
  double near_time_us = 0;  // the nearest group's own time at this size
  {
    std::string f;
    bool in_range, measured;
    near_time_us = own_time_us(*near, q.size_bytes, f, in_range, measured, band);
    const double widen = 1 + distance;
    band.down_log *= widen;
    band.up_log *= widen;
    if (band.has)
      band.rule = "the interval of " + significant(static_cast<double>(n0), 6) + " measured ranks x " +
                  significant(widen, 3) +
                  " (1 + |log2(n / n_measured)|, a rule: rank extrapolation is not measured); there " + band.rule;
  }
  Line line;
  std::string form = "regime";
  if (auto l = regime_line(*near, bus_bytes)) {
    line = *l;
  } else if (usable(*near, "alpha_beta")) {
    form = "alpha_beta";
    line.alpha_us = (*near)["alpha_beta"]["alpha_us"];
    line.us_per_bus_byte = 1.0 / ((*near)["alpha_beta"]["beta_gbps"].get<double>() * 1e3);
  } else {
    throw std::invalid_argument("group " + key_of(*near) +
                                " has neither a regime nor an alpha-beta fit to scale");
  }
  // Trees (log2 n steps) for allreduce's latency-bound regimes, rings/pipelines (n - 1 steps)
  // for the rest and for the bandwidth-bound last regime.
  const bool tree = q.collective == "allreduce" && line.index + 1 < line.count;
  const double ring = static_cast<double>(q.nranks - 1) / static_cast<double>(n0 - 1);
  const double steps = std::log2(static_cast<double>(q.nranks)) / std::log2(static_cast<double>(n0));
  const double scale = tree ? steps : ring;
  const BandwidthTrend trend = bandwidth_trend(pool, *near, q, distance);
  out.groups = {key_of(*near)};
  if (trend.known) out.groups.push_back(trend.other);
  out.extrapolated_by = "x" + significant(std::exp2(distance), 3) + " beyond the measured rank counts (nearest " +
                        significant(static_cast<double>(n0), 6) + ")";
  out.form = form;
  out.provenance = Provenance::extrapolated;
  out.method =
      "from " + significant(static_cast<double>(n0), 6) + " measured ranks: " + form +
      (form == "regime" ? " line " + std::to_string(line.index + 1) + " of " + std::to_string(line.count)
                        : "") +
      ", alpha x " + significant(scale, 3) + (tree ? " (log2 n, tree)" : " (n - 1, ring)") + ", " + tier +
      (trend.known ? " bus bandwidth x " + significant(trend.factor, 3) + " (" + trend.why + ")"
                   : " bus bandwidth kept") +
      pool.rpn_note;
  const double latency = line.alpha_us * scale, transfer = bus_bytes * line.us_per_bus_byte;
  const double t = latency + transfer / trend.factor;
  if (trend.known) widen_by_gap(band, t, latency + transfer, "the time with the bus bandwidth kept");
  // How alpha grows with the group is a rule, not a measurement: the interval spans the other
  // rules too (alpha kept, as on a switch that reduces in the network; log2 n steps; n - 1 steps).
  for (const double other : {1.0, ring, steps})
    if (other != scale)
      widen_by_gap(band, t, line.alpha_us * other + transfer / trend.factor,
                   "the time with alpha x " + significant(other, 3));
  // ... and the measured group's own answer at this size, unscaled: the regime line is a fit, and
  // where launches dominate a larger group is not reliably slower.
  widen_by_gap(band, t, near_time_us, "the " + significant(static_cast<double>(n0), 6) + " measured ranks' own time");
  return t;
}

}  // namespace

std::string to_string(Provenance p) {
  switch (p) {
    case Provenance::measured:
      return "measured";
    case Provenance::interpolated:
      return "interpolated";
    case Provenance::extrapolated:
      return "extrapolated";
  }
  return "?";
}

CommModel::CommModel(const json& calibration) {
  if (!calibration.contains("communication") || !calibration["communication"].contains("collectives") ||
      !calibration["communication"]["collectives"].is_array() ||
      calibration["communication"]["collectives"].empty())
    throw std::invalid_argument("calibration has no communication.collectives groups");
  groups_ = calibration["communication"]["collectives"];
  for (const json& g : groups_) {
    CommGroupInfo i;
    i.key = key_of(g);
    i.collective = g.value("collective", "");
    i.dtype = g.value("dtype", "");
    i.nranks = g.value("nranks", int64_t{0});
    i.nnodes = g.value("nnodes", int64_t{0});
    i.ranks_per_node = g.value("ranks_per_node", int64_t{0});
    std::tie(i.min_size_bytes, i.max_size_bytes) = size_range(g);
    named_best_form(g);  // a best.form that names no usable fit is refused, not skipped
    try {
      i.best_form = best_form(g);
    } catch (const std::invalid_argument&) {
      i.best_form = "";  // a group with no fitted form at all
    }
    info_.push_back(i);
  }
}

CommPrediction CommModel::predict(const CommQuery& query) const {
  const CommQuery q = complete_query(query);
  const bool inter = q.nnodes > 1;
  const std::string tier = inter ? "inter-node" : "intra-node";
  const GroupsByShape chosen = candidate_groups(groups_, q, inter, tier);
  CommPrediction out;
  const double factor = bus_factor(q.collective, static_cast<int>(q.nranks));
  Band band;
  std::optional<double> time_us = from_own_group(chosen, q, out, band);
  if (!time_us) {
    const Pool pool = scaling_pool(chosen, q, inter);
    time_us = between_rank_counts(pool, q, factor, tier, out, band);
    if (!time_us) time_us = beyond_rank_counts(pool, q, factor, tier, out, band);
  }
  out.has_interval = band.has;
  out.lo_us = band.has ? *time_us * std::exp(-band.down_log) : *time_us;
  out.hi_us = band.has ? *time_us * std::exp(band.up_log) : *time_us;
  out.interval_rule = band.rule;
  out.time_us = *time_us;
  out.time_s = *time_us * 1e-6;
  out.algbw_gbps = q.size_bytes / *time_us / 1e3;
  out.busbw_gbps = out.algbw_gbps * factor;
  return out;
}

}  // namespace gpucal::calibration
