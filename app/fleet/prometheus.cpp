#include "app/fleet/prometheus.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "app/fleet/report.h"
#include "core/output/file_io.h"

namespace gpucal::fleet {

std::string prom_name(const std::string& metric) {
  std::string name = "gpucal_" + metric;
  for (char& c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':')) c = '_';
  return name;
}

std::string prom_escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

std::string help_escape(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

// Prometheus spells the non-finite values NaN, +Inf, -Inf; 15 digits keep a timestamp whole.
std::string number_text(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.15g", v);
  return buffer;
}

}  // namespace

void PromText::gauge(const std::string& metric, const std::string& help, const PromLabels& labels, double value) {
  const std::string name = prom_name(metric);
  Family* family = nullptr;
  for (auto& f : families_)
    if (f.name == name) family = &f;
  if (family == nullptr) family = &families_.emplace_back(Family{name, help, {}});
  std::string sample = name, sep = "{";
  for (const auto& [label, text] : labels) {
    if (text.empty()) continue;
    sample += sep + label + "=\"" + prom_escape(text) + "\"";
    sep = ",";
  }
  if (sep == ",") sample += "}";
  family->samples.push_back(sample + " " + number_text(value));
}

std::string PromText::text() const {
  std::string out;
  for (const auto& f : families_) {
    out += "# HELP " + f.name + " " + help_escape(f.help) + "\n# TYPE " + f.name + " gauge\n";
    for (const auto& s : f.samples) out += s + "\n";
  }
  return out;
}

std::optional<double> unix_seconds(const std::string& iso) {
  std::tm t{};
  char zone = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min,
                  &t.tm_sec, &zone) != 7 || zone != 'Z')
    return std::nullopt;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<double>(timegm(&t));
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void write_prometheus(const std::string& path, const PromText& text) {
  try {
    write_file_atomic(path, text.text());
  } catch (const OpenError& e) {
    throw OpenError(std::string("--prometheus: ") + e.what());
  } catch (const WriteError& e) {
    throw WriteError(std::string("--prometheus: ") + e.what());
  }
}

PromLabels subject_labels(const std::string& subject) {
  const auto dash = subject.find("--");
  if (dash == std::string::npos) return {{"node", subject}};
  return {{"node", subject.substr(0, dash)}, {"peer", subject.substr(dash + 2)}};
}

namespace {

std::string figure_help(const std::string& metric, const std::string& unit) {
  const MetricKind k = metric_kind(metric);
  return metric + " (" + (unit.empty() ? k.unit : unit) + ", " + to_string(k.better) + " is better), as gpucal fleet report read it";
}

}  // namespace

PromText report_prometheus(const FleetDir& f, const Diagnosis& d, const std::string& cluster_flag) {
  PromText p;
  const std::string cluster = !cluster_flag.empty() ? cluster_flag
                              : f.manifest.is_object() ? f.manifest.value("cluster", "") : "";
  const std::vector<std::string> suspects = d.suspect_nodes(), links = d.suspect_links();
  auto named = [](const std::vector<std::string>& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  auto sku_of = [&](const std::string& node) {
    const auto it = d.sku_of_node.find(node);
    return it == d.sku_of_node.end() ? std::string() : it->second;
  };
  for (const auto& n : f.nodes)
    p.gauge("node_ok", "1 when gpucal fleet report found the node ok, 0 when it names it (suspect, failed, hung, timed out)",
            {{"node", n.name}, {"cluster", cluster}, {"sku", sku_of(n.name)}}, n.status == "ok" && !named(suspects, n.name));
  for (const auto& l : f.pairs)
    p.gauge("link_ok", "1 when gpucal fleet report found the link between node and peer ok, 0 when it names the link",
            {{"node", l.a}, {"peer", l.b}, {"cluster", cluster}}, l.status == "ok" && !named(links, link_folder_name(l.a, l.b)));
  for (const auto& n : f.nodes)
    for (const auto& [id, m] : n.metrics)
      p.gauge(id, figure_help(id, m.unit), {{"node", n.name}, {"cluster", cluster}, {"sku", sku_of(n.name)}}, m.value);
  for (const auto& l : f.pairs)
    for (const auto& [id, m] : l.metrics)
      p.gauge(id, figure_help(id, m.unit), {{"node", l.a}, {"peer", l.b}, {"cluster", cluster}}, m.value);
  for (const auto& g : f.groups)
    for (const auto& [id, m] : g.metrics)
      p.gauge(id, figure_help(id, m.unit), {{"group", g.name}, {"cluster", cluster}}, m.value);
  const std::string start = f.manifest.is_object() ? f.manifest.value("start_time", "") : "";
  p.gauge("last_run_timestamp_seconds", "when the run gpucal reported on started (else when the report was written), seconds since the epoch",
          {{"cluster", cluster}}, unix_seconds(start).value_or(now_seconds()));
  return p;
}

}  // namespace gpucal::fleet
