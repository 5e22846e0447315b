// report.json and report.junit.xml.
#include <algorithm>
#include <cmath>

#include "app/fleet/report.h"

namespace gpucal::fleet {

using nlohmann::json;

namespace {

json optional_number(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(); }
json finite(double v) { return std::isfinite(v) ? json(v) : json(v > 0 ? "inf" : "-inf"); }

json table_json(const MetricTable& t) {
  json j = {{"metric", t.metric}, {"unit", t.unit}, {"better", to_string(t.better)}, {"floor", optional_number(t.floor)},
            {"floor_source", t.floor_source}, {"typical", optional_number(t.typical)}, {"typical_source", t.typical_source},
            {"rows", json::array()}};
  if (t.reference)
    j["reference"] = {{"median", t.reference->median}, {"mad", t.reference->mad}, {"sigma", t.reference->sigma},
                      {"count", t.reference->count}};
  for (const Ranked& r : t.rows)
    j["rows"].push_back({{"subject", r.subject}, {"value", r.value}, {"robust_z", finite(r.z)},
                         {"deviation", r.deviation}, {"outlier", r.outlier},
                         {"meets_floor", r.meets_floor ? json(*r.meets_floor) : json()}, {"suspect", r.suspect}});
  return j;
}

json tables_json(const std::vector<MetricTable>& tables) {
  json all = json::array();
  for (const auto& t : tables) all.push_back(table_json(t));
  return all;
}

}  // namespace

json report_json(const FleetDir& f, const Diagnosis& d) {
  json j = {{"fleet_dir", f.path},
            {"options", {{"z_threshold", d.options.z_threshold}, {"figures_ranked", d.figures_ranked}, {"min_deviation", d.options.min_deviation},
                         {"gross_factor", d.options.gross_factor},
                         {"expect", d.options.expect}, {"ignore_metrics", d.options.ignore_metrics}, {"statistic", d.options.statistic}}},
            {"run", f.manifest.is_object() ? f.manifest : json()},
            {"suspect_nodes", d.suspect_nodes()},
            {"suspect_links", d.suspect_links()},
            {"suspects", json::array()},
            {"nodes", json::array()},
            {"node_metrics", tables_json(d.node_tables)},
            {"link_capacity", tables_json(d.capacity_tables)},
            {"link_pairs", tables_json(d.pair_tables)},
            {"groups", tables_json(d.group_tables)},
            {"notes", d.notes},
            {"warnings", f.warnings}};
  if (j["run"].is_object()) j["run"].erase("steps");
  for (const auto& s : d.suspects)
    j["suspects"].push_back({{"subject", s.subject}, {"kind", s.kind}, {"metric", s.metric}, {"unit", s.unit},
                             {"value", optional_number(s.value)}, {"fleet_median", optional_number(s.median)},
                             {"reason", s.reason}});
  for (const auto& n : f.nodes) {
    json metrics = json::object();
    for (const auto& [id, m] : n.metrics) metrics[id] = {{"value", m.value}, {"unit", m.unit}, {"point", m.point}};
    const auto sku = d.sku_of_node.find(n.name);
    j["nodes"].push_back({{"name", n.name}, {"status", n.status}, {"detail", n.detail},
                          {"device", n.identity.device_name}, {"backend", n.identity.backend},
                          {"sku", sku == d.sku_of_node.end() ? "" : sku->second}, {"metrics", metrics}});
  }
  return j;
}

std::vector<JUnitCase> report_junit(const FleetDir& f, const Diagnosis& d) {
  std::vector<JUnitCase> cases;
  for (const auto& n : f.nodes) {
    JUnitCase c{"gpucal.fleet.node." + n.name, "status", "", "", n.status + (n.detail.empty() ? "" : ": " + n.detail)};
    if (n.status != "ok") c.failure = n.name + " " + n.status + (n.detail.empty() ? "" : ": " + n.detail);
    cases.push_back(std::move(c));
  }
  auto add_table = [&](const MetricTable& t, const std::string& prefix) {
    for (const Ranked& r : t.rows) {
      JUnitCase c{prefix + r.subject, t.metric, "", "", ""};
      c.output = format_value(r.value) + " " + t.unit + ", " + deviation_text(r) + " vs fleet median" +
                 (t.reference ? " " + format_value(t.reference->median) : "") + ", " + verdict_of(r);
      if (r.suspect) c.failure = t.metric + " " + format_value(r.value) + " " + t.unit + ": " + verdict_of(r);
      cases.push_back(std::move(c));
    }
  };
  for (const auto& t : d.node_tables) add_table(t, "gpucal.fleet.node.");
  for (const auto& t : d.capacity_tables) add_table(t, "gpucal.fleet.node_links.");
  for (const auto& t : d.pair_tables) add_table(t, "gpucal.fleet.pair.");
  for (const auto& t : d.group_tables) add_table(t, "gpucal.fleet.group.");
  // A pair slow because of a slow node is the node's finding, not the link's: the JUnit marks
  // only the links the diagnosis names.
  const auto links = d.suspect_links();
  for (auto& c : cases)
    if (c.classname.rfind("gpucal.fleet.pair.", 0) == 0 && !c.failure.empty() &&
        std::find(links.begin(), links.end(), c.classname.substr(18)) == links.end()) {
      c.output += " (explained by a slow node)";
      c.failure.clear();
    }
  // A phase that measured nothing is a failed case of its own.
  for (const auto& s : d.suspects)
    if (s.kind == "phase") {
      JUnitCase c{"gpucal.fleet.phase", s.subject, "", "", s.reason};
      c.failure = s.subject + ": " + s.reason;
      cases.push_back(std::move(c));
    }
  return cases;
}

}  // namespace gpucal::fleet
