// --prometheus of `gpucal fleet report` (app/fleet/report.h): the verdicts and figures of a fleet
// folder as textfile-collector gauges (app/report/prometheus.h).
#include <algorithm>

#include "app/fleet/report.h"

namespace gpucal::fleet {

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
