#include "app/common/output_guard.h"
#include "app/fleet/baseline.h"

#include <filesystem>
#include <map>
#include <ostream>
#include <regex>
#include <stdexcept>

#include "app/check/expectations.h"
#include "app/common/calibration_json.h"
#include "app/history/fleet_dir.h"
#include "app/history/robust_stats.h"
#include "core/output/metadata.h"

namespace gpucal::fleet {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<NodeFigures> baseline_inputs(const std::vector<std::string>& inputs, Statistic statistic) {
  std::vector<NodeFigures> nodes;
  std::map<std::string, std::string> seen;  // canonical path -> as given
  for (const auto& input : inputs) {
    std::error_code ec;
    const std::string canonical = fs::weakly_canonical(input, ec).string();
    if (const auto [at, fresh] = seen.emplace(ec ? input : canonical, input); !fresh)
      throw std::invalid_argument("INPUT: '" + input + "' is the folder already given as '" + at->second +
                                  "': a baseline counts each node once");
  }
  for (const auto& input : inputs) {
    if (fs::exists(fs::path(input) / "fleet.json") || fs::is_directory(fs::path(input) / "nodes")) {
      const FleetDir f = load_fleet_dir(input, statistic);
      for (const auto& n : f.nodes)
        if (n.status == "ok" && !n.metrics.empty())
          nodes.push_back({(fs::path(input) / "nodes" / n.name).string(), n.metrics, n.identity});
      continue;
    }
    const calibration::ResultsDir results = calibration::load_results_dir(input, /*allow_suspect=*/true);
    nodes.push_back({input, metrics_of(results, statistic), identity_of(results)});
  }
  return nodes;
}

namespace {

std::string regex_escape(const std::string& text) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(text, special, R"(\$&)");
}

json metric_entry(const std::string& id, const std::vector<double>& values, const BaselineOptions& o,
                  const std::string& provenance) {
  const MetricKind kind = metric_kind(id);
  const RobustReference r = *robust_reference(values);
  const double margin = std::max(o.spread_k * r.sigma, o.min_margin * std::fabs(r.median));
  const double floor = kind.better == Better::higher ? r.median - margin : r.median + margin;
  char rule[200];
  std::snprintf(rule, sizeof rule, "median - max(%g x robust sigma, %g x median) over %d nodes: sigma %.4g", o.spread_k,
                o.min_margin, r.count, r.sigma);
  std::string floor_rule = rule;
  if (kind.better == Better::lower) floor_rule.replace(floor_rule.find("median -"), 8, "median +");
  json entry = {{"unit", kind.unit}, {"better", to_string(kind.better)},
                {"what", "measured by gpucal fleet baseline"},
                {"typical", {{"value", r.median}, {"source", "median of " + std::to_string(r.count) + " nodes, " + provenance}}}};
  if (floor > 0) entry["floor"] = {{"value", floor}, {"source", floor_rule + ", " + provenance}};
  else entry["floor"] = {{"value", nullptr}, {"source", "no floor: the spread reaches zero (" + floor_rule + ")"}};
  return entry;
}

}  // namespace

json build_baseline(const std::vector<NodeFigures>& nodes, const BaselineOptions& o) {
  if (static_cast<int>(nodes.size()) < o.min_nodes)
    throw std::invalid_argument("gpucal fleet baseline: " + std::to_string(nodes.size()) + " node(s) with figures; a baseline needs " +
                                std::to_string(o.min_nodes) + " or more");
  std::map<std::string, std::vector<double>> by_metric;
  std::string device, backend;
  for (const auto& n : nodes) {
    for (const auto& [id, m] : n.metrics)
      if (metric_kind(id).known) by_metric[id].push_back(m.value);
    if (device.empty()) device = n.identity.device_name;
    if (backend.empty()) backend = n.identity.backend;
  }
  const Statistic statistic = statistic_from_string(o.statistic);
  const std::string provenance = "gpucal fleet baseline " + iso8601_now() +
                                 (statistic == Statistic::best ? ", figures at the fastest sample" : "");
  json doc = {{"expectations_schema_version", check::kExpectationsSchemaVersion},
              {"sku", o.sku},
              {"name", o.name.empty() ? device : o.name},
              {"match", {{"backend", o.backend.empty() ? backend : o.backend},
                         {"device_regex", o.device_regex.empty() ? "^" + regex_escape(device) + "$" : o.device_regex}}},
              {"generated_by", {{"command", "gpucal fleet baseline"}, {"nodes", nodes.size()}, {"inputs", o.inputs},
                               {"statistic", to_string(statistic)}}},
              {"metrics", json::object()}};
  for (const auto& [id, values] : by_metric)
    if (static_cast<int>(values.size()) >= o.min_nodes) doc["metrics"][id] = metric_entry(id, values, o, provenance);
  check::parse_expectations(doc, o.out);  // what we write must read back
  return doc;
}

int run_baseline(const BaselineOptions& o, std::ostream& out) {
  if (o.sku.empty()) throw std::invalid_argument("--sku: name the SKU the baseline describes");
  calibration::refuse_outputs_over_inputs({{"--output", o.out}}, {.folders = o.inputs});
  const std::vector<NodeFigures> nodes = baseline_inputs(o.inputs, statistic_from_string(o.statistic));
  const json doc = build_baseline(nodes, o);
  calibration::write_json_file(doc, o.out);
  out << "wrote " << o.out << ": " << doc["metrics"].size() << " metric(s) from " << nodes.size() << " node(s)\n";
  for (const auto& [id, m] : doc["metrics"].items())
    out << "  " << id << ": typical " << m["typical"]["value"].get<double>() << " " << m["unit"].get<std::string>()
        << ", floor " << (m["floor"]["value"].is_null() ? std::string("none") : std::to_string(m["floor"]["value"].get<double>()))
        << "\n";
  return 0;
}

}  // namespace gpucal::fleet
