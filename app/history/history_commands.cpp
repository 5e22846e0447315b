#include "app/history/history_commands.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "app/check/expectations.h"
#include "app/common/calibration_json.h"
#include "app/common/output_guard.h"
#include "app/compare/compare_report.h"
#include "app/report/junit.h"
#include "app/report/prometheus.h"
#include "app/history/history_record.h"
#include "core/output/file_io.h"
#include "core/registry/registry.h"

namespace gpucal::history {

using fleet::format_value;

int run_import(const std::string& history, const std::vector<std::string>& paths, const std::string& cluster,
               const fleet::DiagnosisOptions& options, std::ostream& out) {
  const bool expect_file = options.expect != "auto" && options.expect != "none";
  calibration::refuse_outputs_over_inputs({{"--history", history}},
                                          {.files = {expect_file ? options.expect : ""}, .folders = paths});
  HistoryDb db(history);
  for (const auto& p : paths) out << "imported " << import_folder(db, p, cluster, options) << "\n";
  return 0;
}

namespace {

std::string short_time(const std::string& iso) { return iso.size() >= 16 ? iso.substr(0, 16) : iso; }

// A --metric or --node that names nothing recorded is a typo, not an empty answer.
void check_filter(const char* flag, const std::string& value, const std::vector<std::string>& recorded,
                  const std::string& history) {
  if (value.empty() || std::find(recorded.begin(), recorded.end(), value) != recorded.end()) return;
  if (recorded.empty())
    throw std::invalid_argument(std::string(flag) + ": " + history + " records no figures yet");
  throw std::invalid_argument(std::string(flag) + ": " +
                              registry::unknown_message(flag + 2, value, recorded) + " in " + history);
}

// The change less the fleet's median change that night (what the threshold is compared with).
std::string judged_text(const Trend& t) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * (t.change - t.fleet_shift));
  return text;
}

std::string change_text(const Trend& t) {
  if (!t.baseline) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100 * t.change);
  return text;
}

// A series without a verdict (too short a history, no latest figure) has no gpucal_regression.
fleet::PromText regressions_prometheus(const std::vector<Trend>& trends) {
  fleet::PromText p;
  std::string latest;
  for (const auto& t : trends) {
    if (t.latest_time > latest) latest = t.latest_time;
    if (!t.note.empty()) continue;
    fleet::PromLabels labels = fleet::subject_labels(t.node);
    labels.emplace_back("metric", t.metric);
    p.gauge("regression", "1 when gpucal history regressions finds the latest figure beyond its rolling baseline's threshold, else 0",
            labels, t.regression);
    p.gauge("regression_change_ratio", "(latest - baseline) / baseline of the series gpucal history regressions judged", labels, t.change);
    p.gauge("regression_judged_change_ratio", "the change less the fleet's median change that night: what the threshold is compared with", labels, t.change - t.fleet_shift);
    p.gauge("regression_threshold_ratio", "the relative change that counts as a regression for the series", labels, t.threshold);
  }
  for (const auto& t : trends)
    if (t.latest)
      p.gauge(t.metric, t.metric + " (" + t.unit + "): the latest figure in the history", fleet::subject_labels(t.node), *t.latest);
  p.gauge("last_run_timestamp_seconds", "when the latest run in the history started (else when the verdict was written), seconds since the epoch",
          {}, fleet::unix_seconds(latest).value_or(fleet::now_seconds()));
  return p;
}

}  // namespace

namespace {

// A column of `history show`: a run, or nights without one (run_id 0) in a nightly history.
struct ShowColumn {
  std::string label;
  int64_t run_id = 0;
};

std::optional<long> run_day(const std::string& iso) {
  const auto s = iso.size() >= 10 ? fleet::unix_seconds(iso.substr(0, 10) + "T00:00:00Z") : std::nullopt;
  return s ? std::optional<long>(static_cast<long>(*s / 86400)) : std::nullopt;
}

std::string day_text(long day, bool year) {
  const std::time_t t = static_cast<std::time_t>(day) * 86400;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[16];
  std::strftime(text, sizeof text, year ? "%Y-%m-%d" : "%m-%d", &tm);
  return text;
}

// Nightly when the usual gap between run dates is one day; then each gap longer than a night is
// a column of its own, its nights missing. `missing` counts those nights.
std::vector<ShowColumn> show_columns(const std::vector<RunRecord>& runs, int& missing, std::string& missed) {
  std::vector<long> gaps;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const auto a = run_day(runs[i - 1].time), b = run_day(runs[i].time);
    if (a && b && *b > *a) gaps.push_back(*b - *a);
  }
  std::sort(gaps.begin(), gaps.end());
  const bool nightly = !gaps.empty() && gaps[(gaps.size() - 1) / 2] == 1;
  std::map<std::string, int> per_date;
  for (const auto& r : runs) ++per_date[r.time.substr(0, 10)];
  std::vector<ShowColumn> out;
  missing = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto a = i > 0 ? run_day(runs[i - 1].time) : std::nullopt, b = run_day(runs[i].time);
    if (nightly && a && b && *b - *a > 1) {
      const long first = *a + 1, last = *b - 1;
      missing += static_cast<int>(last - first + 1);
      const std::string label = day_text(first, false) + (last > first ? ".." + day_text(last, false) : "");
      missed += (missed.empty() ? "" : ", ") + day_text(first, true) + (last > first ? ".." + day_text(last, true) : "");
      out.push_back({label, 0});
    }
    const std::string& t = runs[i].time;
    std::string label = t.size() >= 10 ? t.substr(5, 5) : t;
    if (per_date[t.substr(0, 10)] > 1 && t.size() >= 16) label += " " + t.substr(11, 5);
    out.push_back({label, runs[i].id});
  }
  return out;
}

constexpr int kShowColumnWidth = 13;

// A night without the figure says why where the history knows: the node's status (hung, failed).
using StatusByRun = std::map<std::string, std::map<int64_t, std::string>>;  // node -> run -> status

void show_series(const std::string& node, const std::vector<SeriesPoint>& points, const std::vector<ShowColumn>& columns,
                 const StatusByRun& status, std::ostream& out) {
  std::map<int64_t, const SeriesPoint*> by_run;
  for (const auto& p : points) by_run[p.run_id] = &p;
  const auto node_status = status.find(node);
  std::ostringstream line;
  line << "  " << std::left << std::setw(20) << node;
  for (const auto& c : columns) {
    const auto p = by_run.find(c.run_id);
    std::string cell = "missing";
    if (p == by_run.end() && node_status != status.end() && node_status->second.count(c.run_id) &&
        node_status->second.at(c.run_id) != "ok")
      cell = node_status->second.at(c.run_id) + "!";
    if (p != by_run.end())
      cell = (p->second->value ? format_value(*p->second->value) : "-") + (p->second->status == "ok" ? "" : "!");
    line << std::setw(kShowColumnWidth) << cell;
  }
  std::string text = line.str();
  out << text.erase(text.find_last_not_of(' ') + 1) << "\n";
}

void write_show_html(const ShowOptions& o, const std::map<SeriesKey, std::vector<SeriesPoint>>& series, std::ostream& out) {
  std::ostringstream page;
  page << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>gpucal history</title></head>"
       << "<body style=\"font-family:sans-serif\"><h1>gpucal history: " << calibration::xml_escape(o.history) << "</h1>";
  std::map<std::string, std::map<SeriesKey, std::vector<SeriesPoint>>> by_metric;
  for (const auto& [key, points] : series)
    if (key.first != "node_status") by_metric[key.first][key] = points;
  for (const auto& [metric, s] : by_metric) page << "<h2>" << calibration::xml_escape(metric) << "</h2>" << svg_trend_chart(metric, s);
  page << "</body></html>\n";
  write_file_atomic(o.html, page.str());
  out << "wrote " << o.html << "\n";
}

}  // namespace

int run_show(const ShowOptions& o, std::ostream& out) {
  calibration::refuse_outputs_over_inputs({{"--html", o.html}}, {.files = {o.history}});
  HistoryDb db(o.history, HistoryDb::Mode::read);
  check_filter("--metric", o.metric, db.metrics(), o.history);
  check_filter("--node", o.node, db.nodes(), o.history);
  const auto series = db.series(o.metric, o.node);
  if (series.empty()) {
    out << "no figures in " << o.history << (o.metric.empty() ? "" : " for metric " + o.metric)
        << (o.node.empty() ? "" : " on node " + o.node) << "\n";
    return 0;
  }
  const std::vector<RunRecord> runs = db.runs();
  int missing = 0;
  std::string missed;
  std::vector<ShowColumn> columns = show_columns(runs, missing, missed);
  out << runs.size() << " run(s) in " << o.history << ", " << short_time(runs.front().time).substr(0, 10) << " to "
      << short_time(runs.back().time).substr(0, 10)
      << (missing ? "; nightly, " + std::to_string(missing) + " night(s) without a run: " + missed : "") << "\n";
  if (columns.size() > static_cast<std::size_t>(o.last)) columns.erase(columns.begin(), columns.end() - o.last);
  StatusByRun status;
  for (const auto& [key, points] : db.series("node_status", o.node))
    for (const auto& p : points) status[key.second][p.run_id] = p.status;
  std::string current;
  for (const auto& [key, points] : series) {
    if (key.first == "node_status") continue;
    if (key.first != current) {
      current = key.first;
      out << "\n" << current << " (" << points.back().unit << ", " << to_string(fleet::metric_kind(current).better)
          << " is better): oldest to newest, last " << columns.size() << " night(s)\n  " << std::left << std::setw(20) << "date";
      for (std::size_t i = 0; i < columns.size(); ++i)
        out << std::setw(i + 1 < columns.size() ? kShowColumnWidth : 0) << columns[i].label;
      out << "\n";
    }
    show_series(key.second, points, columns, status, out);
  }
  out << "(! marks a figure the fleet report flagged, or a node that was not ok; missing: no figure that night, the node "
         "absent from the run or no run at all)\n";
  if (!o.html.empty()) write_show_html(o, series, out);
  return 0;
}

namespace {

double parse_k(const std::string& text) {
  if (text == "auto") return 0;
  try {
    std::size_t used = 0;
    const double k = std::stod(text, &used);
    if (used == text.size() && k > 0 && std::isfinite(k)) return k;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--k: expected auto or a positive number, got '" + text + "'");
}

}  // namespace

// --baseline FILE: the expectations file's floors, per node metric, with the basis a trend shows
// ("floor of my_sku.json (6 nodes)"; "fastest samples" when `fleet baseline --statistic best` made it).
std::map<std::string, FileBaseline> file_baselines(const std::string& path) {
  if (path.empty()) return {};
  const check::Expectations e = check::read_expectations(path);
  const nlohmann::json& made = e.document.value("generated_by", nlohmann::json::object());
  std::string basis = "floor of " + std::filesystem::path(path).filename().string();
  if (made.contains("nodes") && made["nodes"].is_number())
    basis += " (" + std::to_string(made["nodes"].get<int>()) + " nodes" +
             (made.value("statistic", "") == "best" ? ", fastest samples)" : ")");
  std::map<std::string, FileBaseline> out;
  for (const auto& [id, m] : e.metrics)
    if (m.floor.value) out[id] = {m.typical.value, *m.floor.value, basis};
  if (out.empty())
    throw std::invalid_argument("--baseline: " + path + " has no floor to judge by (every metric's floor is null)");
  return out;
}

int run_regressions(const RegressionCommand& command, std::ostream& out) {
  RegressionCommand c = command;
  c.options.k = parse_k(c.k_text);
  calibration::refuse_outputs_over_inputs({{"--junit", c.junit}, {"--json", c.json}, {"--prometheus", c.prometheus}},
                                          {.files = {c.history, c.baseline}});
  const std::map<std::string, FileBaseline> file = file_baselines(c.baseline);
  HistoryDb db(c.history, HistoryDb::Mode::read);
  check_filter("--metric", c.metric, db.metrics(), c.history);
  check_filter("--node", c.node, db.nodes(), c.history);
  // Every node's series, so a short history still has its fleet's spread; then the --node asked for.
  for (const auto& m : c.ignore_metrics) fleet::check_metric_id("--ignore-metrics", m);
  auto series = db.series(c.metric, "");
  for (auto it = series.begin(); it != series.end();)
    it = std::find(c.ignore_metrics.begin(), c.ignore_metrics.end(), it->first.first) != c.ignore_metrics.end() ? series.erase(it)
                                                                                                              : std::next(it);
  std::vector<Trend> trends = analyse(series, c.options, file);
  if (!c.node.empty())
    trends.erase(std::remove_if(trends.begin(), trends.end(), [&](const Trend& t) { return t.node != c.node; }), trends.end());
  int regressions = 0;
  // The columns fit the longest metric and node named (a pair of long host names included).
  std::size_t metric_w = 30, node_w = 20;
  for (const auto& t : trends) {
    metric_w = std::max(metric_w, t.metric.size() + 2);
    node_w = std::max(node_w, t.node.size() + 2);
  }
  const int mw = static_cast<int>(metric_w), nw = static_cast<int>(node_w);
  out << std::left << std::setw(mw) << "metric" << std::setw(nw) << "node" << std::setw(12) << "latest" << std::setw(12)
      << "baseline" << std::setw(10) << "change" << std::setw(11) << "threshold" << std::setw(60) << "basis" << "verdict\n";
  std::vector<fleet::JUnitCase> cases;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& t : trends) {
    regressions += t.regression;
    char threshold[16];
    std::snprintf(threshold, sizeof threshold, "%.1f%%", 100 * t.threshold);
    const std::string verdict = t.regression ? "REGRESSION" : (t.note.empty() ? "ok" : t.note);
    out << std::setw(mw) << t.metric << std::setw(nw) << t.node << std::setw(12) << (t.latest ? format_value(*t.latest) : "-")
        << std::setw(12) << (t.baseline ? format_value(*t.baseline) : "-") << std::setw(10) << change_text(t) << std::setw(11)
        << (t.baseline ? threshold : "-") << std::setw(60) << ((t.basis.empty() ? "-" : t.basis) + " ") << verdict << "\n";
    fleet::JUnitCase jc{"gpucal.history." + t.node, t.metric, "", "", verdict};
    if (t.regression)
      jc.failure = t.metric + " on " + t.node + ": " + change_text(t) + " against " +
                   (t.spread_from == kFromBaselineFile ? t.basis : "its rolling baseline") +
                   (t.fleet_shift != 0 ? ", " + judged_text(t) + " beyond the fleet's own change" : std::string()) +
                   " (threshold " + threshold + ")";
    else if (!t.note.empty()) jc.skipped = t.note;
    cases.push_back(jc);
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    all.push_back({{"metric", t.metric}, {"node", t.node}, {"unit", t.unit}, {"latest", opt(t.latest)}, {"latest_time", t.latest_time},
                   {"baseline", opt(t.baseline)}, {"change", t.change}, {"fleet_shift", t.fleet_shift}, {"judged_change", t.change - t.fleet_shift}, {"spread", t.spread}, {"k", t.k}, {"threshold", t.threshold},
                   {"history", t.history}, {"spread_from", t.spread_from}, {"fleet_shift", t.fleet_shift}, {"basis", t.basis},
                   {"regression", t.regression}, {"note", t.note}});
  }
  out << regressions << " regression(s) in " << trends.size() << " series (window " << c.options.window << ", k "
      << (trends.empty() ? "-" : format_value(trends.front().k)) << (c.options.k > 0 ? "" : " (auto)") << ", minimum change " << format_value(100 * c.options.min_change)
      << "%; a series with fewer than window earlier nights takes the fleet's spread of that night's change"
      << (file.empty() ? "" : "; a node metric " + c.baseline + " has a floor for is judged against that floor") << ")\n";
  if (!c.junit.empty()) write_file_atomic(c.junit, fleet::junit_xml("gpucal history regressions", cases));
  if (!c.json.empty()) calibration::write_json_file({{"trends", all}}, c.json);
  if (!c.prometheus.empty()) fleet::write_prometheus(c.prometheus, regressions_prometheus(trends));
  // A gate that judged nothing fails closed: no series with a baseline to compare against.
  const auto judged = std::count_if(trends.begin(), trends.end(), [](const Trend& t) { return t.note.empty(); });
  const auto by_file = std::count_if(trends.begin(), trends.end(), [](const Trend& t) { return t.spread_from == kFromBaselineFile; });
  if (!file.empty() && by_file == 0) {
    write_stderr_line("gpucal: error: history regressions judged nothing against --baseline " + c.baseline +
                      ": none of its metrics is a node series with a latest figure in " + c.history +
                      " (was it made for another fleet's metrics?)");
    return 1;
  }
  if (judged == 0) {
    write_stderr_line("gpucal: error: history regressions judged nothing: none of " + std::to_string(trends.size()) +
                      " series in " + c.history + " has a latest figure and an earlier ok run to compare it with, with a spread to "
                      "judge the change by (the verdict column says why for each)");
    return 1;
  }
  return regressions > 0 ? 1 : 0;
}

}  // namespace gpucal::history
