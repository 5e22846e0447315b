#include "app/check/check_command.h"

#include <filesystem>
#include <iomanip>
#include <sstream>

#include "app/common/calibration_json.h"
#include "app/common/output_guard.h"
#include "app/report/junit.h"
#include "app/report/prometheus.h"
#include "core/output/file_io.h"

namespace gpucal::check {

using fleet::format_value;

Expectations resolve_expectations(const std::string& expect, const std::string& device_name,
                                  const std::string& backend) {
  if (expect == "none")
    throw std::invalid_argument("--expect none: gpucal check checks a run against expectations; give auto or a file");
  if (expect != "auto") return read_expectations(expect);
  const std::string dir = find_expectations_dir();
  auto found = match_sku(read_expectations_dir(dir), device_name, backend);
  if (!found)
    throw std::invalid_argument("--expect auto: no file in " + dir + " matches device '" + device_name + "' (" +
                                backend + "); give --expect FILE, or write one with `gpucal fleet baseline`");
  return *found;
}

namespace {

std::string optional_text(const std::optional<double>& v) { return v ? format_value(*v) : "-"; }

std::string vs_typical(const CheckLine& l) {
  if (!l.value || !l.typical) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", 100.0 * *l.value / *l.typical);
  return text;
}

std::vector<fleet::JUnitCase> junit_cases(const std::string& sku, const std::vector<CheckLine>& lines) {
  std::vector<fleet::JUnitCase> cases;
  for (const auto& l : lines) {
    fleet::JUnitCase c{"gpucal.check." + sku, l.metric, "", "", ""};
    c.output = "value " + optional_text(l.value) + " " + l.unit + ", floor " + optional_text(l.floor) + " (" +
               l.floor_source + "), typical " + optional_text(l.typical) + " (" + l.typical_source + ")";
    if (l.status == "fail") c.failure = l.metric + " " + optional_text(l.value) + " " + l.unit + " misses the floor " + optional_text(l.floor);
    else if (l.status != "pass") c.skipped = l.status;
    cases.push_back(std::move(c));
  }
  return cases;
}

nlohmann::json to_json(const CheckOptions& o, const Expectations& e, const std::vector<CheckLine>& lines) {
  nlohmann::json j = {{"results_dir", o.results_dir}, {"expectations", e.path}, {"sku", e.sku}, {"metrics", nlohmann::json::array()}};
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  for (const auto& l : lines)
    j["metrics"].push_back({{"metric", l.metric}, {"status", l.status}, {"unit", l.unit}, {"value", opt(l.value)},
                            {"floor", opt(l.floor)}, {"floor_source", l.floor_source}, {"typical", opt(l.typical)},
                            {"typical_source", l.typical_source}, {"detail", l.detail}});
  return j;
}

// A metric without a verdict (no floor, not measured) has no gpucal_check_ok: absent is not a pass.
fleet::PromText check_prometheus(const Expectations& e, const fleet::RunIdentity& who, const std::string& node,
                                 const std::vector<CheckLine>& lines) {
  fleet::PromText p;
  for (const auto& l : lines)
    if (l.status == "pass" || l.status == "fail")
      p.gauge("check_ok", "1 when gpucal check found the metric at or better than its SKU's floor, 0 when it misses it",
              {{"node", node}, {"sku", e.sku}, {"metric", l.metric}}, l.status == "pass");
  for (const auto& l : lines)
    for (const char* status : {"pass", "fail", "no floor", "not measured"})
      p.gauge("check_status", "gpucal check's verdict per metric: 1 for its status, 0 for the others",
              {{"node", node}, {"sku", e.sku}, {"metric", l.metric}, {"status", status}}, l.status == status);
  for (const auto& l : lines)
    if (l.value)
      p.gauge(l.metric, l.metric + " (" + l.unit + ") as gpucal check measured it", {{"node", node}, {"sku", e.sku}}, *l.value);
  for (const auto& l : lines)
    if (l.floor)
      p.gauge("check_floor", "the SKU's floor gpucal check held the metric to (its unit)", {{"node", node}, {"sku", e.sku}, {"metric", l.metric}},
              *l.floor);
  p.gauge("last_run_timestamp_seconds", "when the checked run started (else when the check ran), seconds since the epoch",
          {{"node", node}}, fleet::unix_seconds(who.start_time).value_or(fleet::now_seconds()));
  return p;
}

std::string node_name(const fleet::RunIdentity& who, const std::string& results_dir) {
  if (!who.hostname.empty()) return who.hostname;
  const std::filesystem::path dir = std::filesystem::path(results_dir).lexically_normal();
  return dir.filename().empty() ? dir.parent_path().filename().string() : dir.filename().string();
}

}  // namespace

std::string format_check_table(const std::vector<CheckLine>& lines) {
  std::ostringstream out;
  out << std::left << std::setw(32) << "metric" << std::setw(12) << "value" << std::setw(10) << "unit" << std::setw(12)
      << "floor" << std::setw(12) << "typical" << std::setw(11) << "of typical" << "status\n";
  for (const auto& l : lines)
    out << std::left << std::setw(32) << l.metric << std::setw(12) << optional_text(l.value) << std::setw(10) << l.unit
        << std::setw(12) << optional_text(l.floor) << std::setw(12) << optional_text(l.typical) << std::setw(11)
        << vs_typical(l) << l.status << "\n";
  return out.str();
}

std::string format_check_markdown(const std::string& title, const std::vector<CheckLine>& lines) {
  std::ostringstream out;
  out << "# " << title << "\n\n| metric | value | unit | floor | typical | of typical | status | floor source |\n"
      << "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& l : lines)
    out << "| " << l.metric << " | " << optional_text(l.value) << " | " << l.unit << " | " << optional_text(l.floor)
        << " | " << optional_text(l.typical) << " | " << vs_typical(l) << " | " << l.status << " | " << l.floor_source
        << " |\n";
  return out.str();
}

int run_check(const CheckOptions& o, std::ostream& out) {
  calibration::refuse_outputs_over_inputs({{"--junit", o.junit}, {"--json", o.json}, {"--markdown", o.markdown},
                                           {"--prometheus", o.prometheus}},
                                          {.files = {o.expect == "auto" ? "" : o.expect}, .folders = {o.results_dir}});
  const calibration::ResultsDir results = calibration::load_results_dir(o.results_dir, /*allow_suspect=*/true);
  const fleet::RunIdentity who = fleet::identity_of(results);
  const Expectations e = resolve_expectations(o.expect, who.device_name, who.backend);
  const std::vector<CheckLine> lines = check_metrics(fleet::metrics_of(results), e);
  int fails = 0, passes = 0;
  for (const auto& l : lines) fails += l.status == "fail", passes += l.status == "pass";
  const std::string title = "gpucal check " + o.results_dir + ": " + who.device_name + " (" + who.backend + ") against " +
                            e.sku + " (" + e.path + ")";
  out << title << "\n" << format_check_table(lines) << passes << " pass, " << fails << " fail, "
      << (lines.size() - static_cast<std::size_t>(passes + fails)) << " without a verdict (no floor or not measured)\n";
  for (const auto& l : lines)
    if (l.above_peak) out << l.metric << ": " << l.detail << "\n";
  if (!o.junit.empty()) write_file_atomic(o.junit, fleet::junit_xml("gpucal check " + e.sku, junit_cases(e.sku, lines)));
  if (!o.json.empty()) calibration::write_json_file(to_json(o, e, lines), o.json);
  if (!o.markdown.empty()) write_file_atomic(o.markdown, format_check_markdown(title, lines));
  if (!o.prometheus.empty()) fleet::write_prometheus(o.prometheus, check_prometheus(e, who, node_name(who, o.results_dir), lines));
  // A gate that judged nothing fails closed: no metric of the file measured with a floor to meet.
  if (passes + fails == 0) {
    write_stderr_line("gpucal: error: check judged nothing: " + o.results_dir + " holds none of the " +
                      std::to_string(lines.size()) + " metric(s) " + e.path +
                      " gives a floor for (the table says what each lacks)");
    return 1;
  }
  return fails > 0 ? 1 : 0;
}

}  // namespace gpucal::check
