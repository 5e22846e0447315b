#include "app/history/history_commands.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

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
  out << db.runs().size() << " run(s) in " << o.history << "\n";
  std::string current;
  for (const auto& [key, points] : series) {
    if (key.first == "node_status") continue;
    if (key.first != current) {
      current = key.first;
      out << "\n" << current << " (" << points.back().unit << ", " << to_string(fleet::metric_kind(current).better)
          << " is better): oldest to newest, last " << o.last << "\n";
    }
    out << "  " << std::left << std::setw(20) << key.second;
    const std::size_t first = points.size() > static_cast<std::size_t>(o.last) ? points.size() - static_cast<std::size_t>(o.last) : 0;
    for (std::size_t i = first; i < points.size(); ++i)
      out << " " << (points[i].value ? format_value(*points[i].value) : "-") << (points[i].status == "ok" ? "" : "!");
    out << "\n";
  }
  out << "(! marks a figure the fleet report flagged, or a node that was not ok)\n";
  if (!o.html.empty()) {
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
  return 0;
}

int run_regressions(const RegressionCommand& c, std::ostream& out) {
  calibration::refuse_outputs_over_inputs({{"--junit", c.junit}, {"--json", c.json}, {"--prometheus", c.prometheus}},
                                          {.files = {c.history}});
  HistoryDb db(c.history, HistoryDb::Mode::read);
  check_filter("--metric", c.metric, db.metrics(), c.history);
  check_filter("--node", c.node, db.nodes(), c.history);
  const std::vector<Trend> trends = analyse(db.series(c.metric, c.node), c.options);
  int regressions = 0;
  out << std::left << std::setw(30) << "metric" << std::setw(20) << "node" << std::setw(12) << "latest" << std::setw(12)
      << "baseline" << std::setw(10) << "change" << std::setw(11) << "threshold" << std::setw(9) << "history" << "verdict\n";
  std::vector<fleet::JUnitCase> cases;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& t : trends) {
    regressions += t.regression;
    char threshold[16];
    std::snprintf(threshold, sizeof threshold, "%.1f%%", 100 * t.threshold);
    const std::string verdict = t.regression ? "REGRESSION" : (t.note.empty() ? "ok" : t.note);
    out << std::setw(30) << t.metric << std::setw(20) << t.node << std::setw(12) << (t.latest ? format_value(*t.latest) : "-")
        << std::setw(12) << (t.baseline ? format_value(*t.baseline) : "-") << std::setw(10) << change_text(t) << std::setw(11)
        << (t.baseline ? threshold : "-") << std::setw(9) << t.history << verdict << "\n";
    fleet::JUnitCase jc{"gpucal.history." + t.node, t.metric, "", "", verdict};
    if (t.regression) jc.failure = t.metric + " on " + t.node + ": " + change_text(t) + " against its rolling baseline (threshold " + threshold + ")";
    else if (!t.note.empty()) jc.skipped = t.note;
    cases.push_back(jc);
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    all.push_back({{"metric", t.metric}, {"node", t.node}, {"unit", t.unit}, {"latest", opt(t.latest)}, {"latest_time", t.latest_time},
                   {"baseline", opt(t.baseline)}, {"change", t.change}, {"spread", t.spread}, {"threshold", t.threshold},
                   {"history", t.history}, {"regression", t.regression}, {"note", t.note}});
  }
  out << regressions << " regression(s) in " << trends.size() << " series (window " << c.options.window << ", k "
      << c.options.k << ", minimum change " << format_value(100 * c.options.min_change) << "%)\n";
  if (!c.junit.empty()) write_file_atomic(c.junit, fleet::junit_xml("gpucal history regressions", cases));
  if (!c.json.empty()) calibration::write_json_file({{"trends", all}}, c.json);
  if (!c.prometheus.empty()) fleet::write_prometheus(c.prometheus, regressions_prometheus(trends));
  // A gate that judged nothing fails closed: no series with a baseline to compare against.
  const auto judged = std::count_if(trends.begin(), trends.end(), [](const Trend& t) { return t.note.empty(); });
  if (judged == 0) {
    write_stderr_line("gpucal: error: history regressions judged nothing: none of " + std::to_string(trends.size()) +
                      " series in " + c.history + " has a latest figure and " + std::to_string(c.options.min_history) +
                      " earlier ok run(s) to compare it with (the verdict column says why for each)");
    return 1;
  }
  return regressions > 0 ? 1 : 0;
}

}  // namespace gpucal::history
