#include "app/fit/comm_fits.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "app/fit/comm_forms.h"
#include "app/fit/comm_interval.h"
#include "app/fit/cv_selection.h"
#include "app/fit/fit.h"
#include "app/fit/fit_table.h"
#include "app/fit/holdout.h"

namespace gpucal::calibration {

namespace {

using nlohmann::json;

json heldout_json(const HeldOutError& h, bool list_sizes = true) {
  json j{{"computed", h.computed}, {"fit_points", h.fit_points}, {"heldout_points", h.heldout_points}};
  if (h.computed) {
    j["mape_pct"] = h.mape_pct;
    j["max_abs_rel_err_pct"] = h.max_abs_rel_err_pct;
    if (list_sizes) j["heldout_sizes_bytes"] = h.heldout_sizes_bytes;
  } else {
    j["reason"] = h.reason_not_computed;
  }
  return j;
}

std::size_t distinct_sizes(const std::vector<SizeTimePoint>& points) {
  std::set<double> sizes;
  for (const auto& p : points) sizes.insert(p.size_bytes);
  return sizes.size();
}

// A form as a cross-validation candidate: fitted to the training points, evaluated at the sizes.
Candidate form_candidate(const std::string& form, double bus_factor) {
  return {form, comm_form_min_sizes(form),
          [form, bus_factor](const std::vector<SizeTimePoint>& train, const std::vector<double>& sizes) {
            const json p = fit_comm_form(form, train, bus_factor);
            std::vector<double> predicted;
            for (double s : sizes) predicted.push_back(predict_comm_form(form, p, s, bus_factor));
            return predicted;
          }};
}

// One form: parameters from the fit on all points, errors from the two cross-validations (every
// refit runs the form's whole fit: nothing carries over from the fit on all points). `errors`
// gets them for the choice of the best form.
json fit_form(const std::string& form, const std::vector<SizeTimePoint>& points, double bus_factor,
              std::vector<std::pair<std::string, CandidateErrors>>& errors) {
  const int min_sizes = comm_form_min_sizes(form);
  if (static_cast<int>(distinct_sizes(points)) < min_sizes)
    return json{{"error", "needs " + std::to_string(min_sizes) + " distinct sizes, group has " +
                              std::to_string(distinct_sizes(points))}};
  json j;
  try {
    j = fit_comm_form(form, points, bus_factor);
  } catch (const std::exception& e) {
    return json{{"error", e.what()}};
  }
  const CandidateErrors e = cross_validate(points, form_candidate(form, bus_factor));
  errors.push_back({form, e});
  j["heldout"] = heldout_json(e.heldout);
  j["loo"] = heldout_json(e.loo, false);
  return j;
}

// The plain baseline every form is compared with: log-log interpolation between the measured
// neighbours (fit_table.h), on the same held-out sizes.
json baseline_loglog(const std::vector<SizeTimePoint>& points) {
  const Candidate loglog{"loglog", comm_form_min_sizes("table"),
                         [](const std::vector<SizeTimePoint>& train, const std::vector<double>& sizes) {
                           const TableParams t = fit_table(train);
                           std::vector<double> predicted;
                           for (double s : sizes) predicted.push_back(predict_loglog_linear(t, s));
                           return predicted;
                         }};
  const CandidateErrors e = cross_validate(points, loglog);
  return {{"method", "straight lines in ln time against ln size between the per-size minimum times"},
          {"heldout", heldout_json(e.heldout)},
          {"loo", heldout_json(e.loo, false)}};
}

json ranking_json(const std::vector<CandidateScore>& ranking) {
  json out = json::array();
  for (const auto& r : ranking)
    out.push_back({{"form", r.name},
                   {"score_pct", r.score_pct},
                   {"heldout_mape_pct", r.heldout_mape_pct},
                   {"loo_mape_pct", r.loo_mape_pct}});
  return out;
}

const char* const kCriterion =
    "mean of the every-3rd-size held-out MAPE and the leave-one-out MAPE; the table form is kept unless another "
    "form's is lower by more than one standard error of the paired difference";
// The form a shaped form must beat by more than the noise of the scores (cv_selection.h).
const char* const kPreferredForm = "table";

json choice_json(const Choice& c) {
  json j{{"rule", c.rule}};
  if (c.compared) {
    j["advantage_over_preferred_pct"] = c.advantage_pct;
    j["standard_error_pct"] = c.standard_error_pct;
  }
  return j;
}

// The held-out error of the choice itself: the forms ranked on the training sizes of the
// every-3rd split alone, the winner fitted to them and evaluated on the held-out sizes
// (cv_selection.h).
json selection_heldout_json(const std::vector<SizeTimePoint>& points, double bus_factor) {
  std::vector<Candidate> candidates;
  for (const auto& form : comm_form_names()) candidates.push_back(form_candidate(form, bus_factor));
  const SelectionHeldOut s = heldout_error_of_selection(points, candidates, kPreferredForm);
  json j = heldout_json(s.heldout);
  j["form"] = s.choice.name.empty() ? json(nullptr) : json(s.choice.name);
  if (!s.choice.name.empty()) j["choice"] = choice_json(s.choice);
  j["training_ranking"] = ranking_json(s.ranking);
  return j;
}

// The form chosen by cross-validated error on all points (cv_selection.h: the lowest score, ties
// to the simpler form, earlier in comm_form_names(); the table unless beaten by more than one
// standard error), and the nested held-out error of making that choice.
json choose_best(const json& group, const std::vector<std::pair<std::string, CandidateErrors>>& errors,
                 const std::vector<SizeTimePoint>& points, double bus_factor) {
  const std::vector<CandidateScore> ranking = rank_candidates(errors);
  json best{{"criterion", kCriterion},
            {"ranking", ranking_json(ranking)},
            {"selection_heldout", selection_heldout_json(points, bus_factor)}};
  if (ranking.empty()) {
    best["form"] = nullptr;
    best["reason"] = "no form could be fitted";
    for (const auto& form : comm_form_names())
      if (!group[form].contains("error")) {
        best["form"] = form;
        best["reason"] =
            "too few sizes to cross-validate any form; " + form + " is the simplest form that fits";
        break;
      }
    return best;
  }
  const Choice choice = choose_candidate(ranking, errors, kPreferredForm);
  const CandidateScore& chosen =
      *std::find_if(ranking.begin(), ranking.end(), [&](const CandidateScore& r) { return r.name == choice.name; });
  const CandidateScore& top = ranking.front();
  std::ostringstream why;
  why.precision(3);
  if (chosen.name == top.name) {
    why << "lowest cross-validated error: held-out " << top.heldout_mape_pct << "%, leave-one-out "
        << top.loo_mape_pct << "%, score " << top.score_pct << "%";
    if (ranking.size() > 1) why << "; next " << ranking[1].name << " " << ranking[1].score_pct << "%";
    if (choice.compared)
      why << "; " << choice.advantage_pct << " points below " << kPreferredForm << ", more than one standard error ("
          << choice.standard_error_pct << ")";
  } else {
    why << kPreferredForm << " kept: " << top.name << " scores " << top.score_pct << "% against its "
        << chosen.score_pct << "%, " << choice.advantage_pct << " points, within one standard error ("
        << choice.standard_error_pct << "); held-out " << chosen.heldout_mape_pct << "%, leave-one-out "
        << chosen.loo_mape_pct << "%";
  }
  best["form"] = chosen.name;
  best["score_pct"] = chosen.score_pct;
  best["heldout_mape_pct"] = chosen.heldout_mape_pct;
  best["loo_mape_pct"] = chosen.loo_mape_pct;
  best["choice"] = choice_json(choice);
  best["reason"] = why.str();
  return best;
}

// Each fitted form evaluated on 64 log-spaced sizes over the measured range, as bus GB/s, so the
// plot scripts draw the fits without a second copy of the formulas.
json model_curves(const json& group, const std::vector<SizeTimePoint>& points, double bus_factor) {
  double lo = points.front().size_bytes, hi = lo;
  for (const auto& p : points) {
    lo = std::min(lo, p.size_bytes);
    hi = std::max(hi, p.size_bytes);
  }
  constexpr int kCurvePoints = 64;
  std::vector<double> sizes;
  for (int i = 0; i < kCurvePoints; ++i)
    sizes.push_back(std::exp2(std::log2(lo) + (std::log2(hi) - std::log2(lo)) * i / (kCurvePoints - 1)));
  json curves{{"size_bytes", sizes}};
  for (const auto& form : comm_form_names()) {
    if (group[form].contains("error")) continue;
    std::vector<double> values;
    for (double s : sizes)
      values.push_back(s * bus_factor / (predict_comm_form(form, group[form], s, bus_factor) * 1e3));
    curves[form + "_busbw_gbps"] = values;
  }
  return curves;
}

// The 90% prediction interval of the best form, from its leave-one-out residuals (comm_interval.h).
json best_form_interval(const json& group, const std::vector<std::pair<std::string, CandidateErrors>>& errors,
                        const std::vector<SizeTimePoint>& points, double bus_factor) {
  const json& form = group["best"]["form"];
  if (!form.is_string())
    return {{"computed", false}, {"level", kIntervalLevel}, {"reason", "no form was fitted"}};
  const auto e = std::find_if(errors.begin(), errors.end(), [&](const auto& x) { return x.first == form; });
  std::vector<double> sizes;
  for (const auto& p : points) sizes.push_back(p.size_bytes);
  return fit_interval(form, e == errors.end() ? HeldOutError{} : e->second.loo, sizes, group["regime"], bus_factor);
}

json fit_group(json group, const std::vector<SizeTimePoint>& points, double bus_factor) {
  json measured = json::array();
  for (const auto& p : points)
    measured.push_back({{"size_bytes", p.size_bytes},
                        {"time_us_median", p.time_us},
                        {"busbw_gbps", p.size_bytes * bus_factor / (p.time_us * 1e3)}});
  group["bus_factor"] = bus_factor;
  group["points"] = measured;
  std::vector<std::pair<std::string, CandidateErrors>> errors;
  for (const auto& form : comm_form_names()) group[form] = fit_form(form, points, bus_factor, errors);
  group["baseline_loglog"] = baseline_loglog(points);
  group["best"] = choose_best(group, errors, points, bus_factor);
  group["interval"] = best_form_interval(group, errors, points, bus_factor);
  group["model_curves"] = model_curves(group, points, bus_factor);
  return group;
}

// "TREE/LL" from the rows' nccl_algo/nccl_proto when the CSV has them, else "".
std::string regime_label(const CsvTable& t, std::size_t r) {
  const std::string algo = t.get_string_or(r, "nccl_algo", ""), proto = t.get_string_or(r, "nccl_proto", "");
  return algo.empty() || proto.empty() ? "" : algo + "/" + proto;
}

json fit_collectives(const BenchResults& bench) {
  const CsvTable& t = bench.table;
  t.require_columns({"collective", "dtype", "nranks", "ranks_per_node", "nnodes", "spans_nodes", "size_bytes",
                     "bus_factor"});
  using Key = std::tuple<std::string, std::string, int64_t, int64_t, int64_t>;
  std::map<Key, std::vector<std::size_t>> groups;
  // An imported log that names no hosts leaves the node cells empty: its group has nnodes and
  // ranks_per_node 0 and spans_nodes -1, which no tier's consumer picks.
  auto count_or = [&t](std::size_t r, const char* column, int64_t unknown) {
    return t.get_optional_double(r, column) ? t.get_int(r, column) : unknown;
  };
  for (std::size_t r : bench.ok_rows)
    groups[{t.get_string(r, "collective"), t.get_string(r, "dtype"), t.get_int(r, "nranks"),
            count_or(r, "ranks_per_node", 0), count_or(r, "nnodes", 0)}]
        .push_back(r);
  json out = json::array();
  for (const auto& [key, rows] : groups) {
    std::vector<SizeTimePoint> points;
    for (std::size_t r : rows)
      points.push_back(
          {t.get_double(r, "size_bytes"), t.get_double(r, "time_us_median"), regime_label(t, r)});
    const double bus_factor = t.get_double(rows.front(), "bus_factor");
    const auto& [collective, dtype, nranks, ranks_per_node, nnodes] = key;
    out.push_back(fit_group({{"collective", collective},
                             {"dtype", dtype},
                             {"nranks", nranks},
                             {"ranks_per_node", ranks_per_node},
                             {"nnodes", nnodes},
                             {"spans_nodes", count_or(rows.front(), "spans_nodes", -1)}},
                            points, bus_factor));
  }
  return out;
}

json fit_p2p(const BenchResults& bench) {
  const CsvTable& t = bench.table;
  t.require_columns({"pattern", "direction", "link_class", "src_node", "dst_node", "size_bytes"});
  using Key = std::tuple<std::string, std::string, std::string, int>;
  std::map<Key, std::vector<std::size_t>> groups;
  for (std::size_t r : bench.ok_rows) {
    if (t.get_string(r, "pattern") == "copy") continue;  // memory bandwidth, see compute_tables
    const int spans_nodes = t.get_string(r, "src_node") != t.get_string(r, "dst_node") ? 1 : 0;
    groups[{t.get_string(r, "pattern"), t.get_string(r, "direction"), t.get_string(r, "link_class"),
            spans_nodes}]
        .push_back(r);
  }
  json out = json::array();
  for (const auto& [key, rows] : groups) {
    std::vector<SizeTimePoint> points;
    for (std::size_t r : rows)
      points.push_back({t.get_double(r, "size_bytes"), t.get_double(r, "time_us_median")});
    const auto& [pattern, direction, link_class, spans_nodes] = key;
    out.push_back(fit_group({{"pattern", pattern},
                             {"direction", direction},
                             {"link_class", link_class},
                             {"spans_nodes", spans_nodes}},
                            points, 1.0));
  }
  return out;
}

}  // namespace

json fit_communication(const ResultsDir& results) {
  json out{{"collectives", json::array()}, {"p2p", json::array()}};
  if (const BenchResults* b = results.find("collectives")) out["collectives"] = fit_collectives(*b);
  if (const BenchResults* b = results.find("p2p")) out["p2p"] = fit_p2p(*b);
  return out;
}

}  // namespace gpucal::calibration
