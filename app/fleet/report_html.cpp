// report.html: the Markdown report's content as HTML tables, with a strip plot per node metric
// and a heatmap per pair metric, in one file with no external resource.
#include <sstream>
#include <utility>

#include "app/compare/compare_report.h"
#include "app/fleet/report.h"

namespace gpucal::fleet {

using calibration::xml_escape;

namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px;text-align:left}th{background:#f3f3f3}"
    ".bad{color:#c00;font-weight:bold}.note{color:#555}";

void row(std::ostringstream& out, const std::vector<std::string>& cells, bool header = false, bool bad = false) {
  out << "<tr" << (bad ? " class=\"bad\"" : "") << ">";
  for (const auto& c : cells) out << (header ? "<th>" : "<td>") << xml_escape(c) << (header ? "</th>" : "</td>");
  out << "</tr>";
}

void metric_section(std::ostringstream& out, const MetricTable& t, const std::string& subject, const std::string& plot) {
  out << "<h3>" << xml_escape(t.metric) << " <small>(" << xml_escape(t.unit + ", " + better_text(t.better)) << ")</small></h3>";
  out << "<p class=\"note\">";
  if (t.reference)
    out << "fleet median " << xml_escape(format_value(t.reference->median)) << ", robust sigma "
        << xml_escape(format_value(t.reference->sigma)) << " over " << t.reference->count << "; ";
  out << "floor " << xml_escape(t.floor ? format_value(*t.floor) + " (" + t.floor_source + ")" : "none") << "</p>" << plot;
  out << "<table>";
  row(out, {subject, "value", "vs median", "robust z", "verdict"}, true);
  for (const Ranked& r : t.rows) {
    char z[16];
    std::snprintf(z, sizeof z, "%+.1f", r.z);
    row(out, {r.subject, format_value(r.value), deviation_text(r), z, verdict_of(r)}, false, r.suspect);
  }
  out << "</table>";
}

void summary_section(std::ostringstream& out, const FleetDir& f, const Diagnosis& d) {
  out << "<h1>gpucal fleet report</h1><p>" << xml_escape(f.path) << ": " << f.nodes.size() << " node(s)";
  // A field fleet.json leaves empty or out is left out of the line, word and all: no "cluster ,".
  for (const auto& [key, word] : {std::pair{"cluster", "cluster "}, {"suite", "suite "}, {"start_time", "started "}}) {
    const auto field = f.manifest.is_object() && f.manifest.contains(key) && f.manifest[key].is_string()
                           ? f.manifest[key].get<std::string>() : std::string();
    if (!field.empty()) out << ", " << word << xml_escape(field);
  }
  out << "</p><h2>Suspects</h2>";
  if (d.suspects.empty()) out << "<p>None: every node and link is within the fleet's spread and above its floors.</p>";
  else {
    out << "<table>";
    row(out, {"subject", "kind", "metric", "value", "fleet median", "reason"}, true);
    for (const auto& s : d.suspects)
      row(out, {s.subject, s.kind, s.metric.empty() ? "-" : s.metric, s.value ? format_value(*s.value) + " " + s.unit : "-",
                s.median ? format_value(*s.median) : "-", s.reason}, false, true);
    out << "</table>";
  }
  out << "<h2>Nodes</h2><table>";
  row(out, {"node", "status", "device", "SKU", "detail"}, true);
  for (const auto& n : f.nodes) {
    const auto sku = d.sku_of_node.find(n.name);
    row(out, {n.name, n.status, n.identity.device_name, sku == d.sku_of_node.end() ? "" : sku->second, n.detail}, false,
        n.status != "ok");
  }
  out << "</table>";
}

}  // namespace

std::string report_html(const FleetDir& f, const Diagnosis& d) {
  std::ostringstream out;
  out << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>gpucal fleet report</title><style>" << kStyle
      << "</style></head><body>";
  summary_section(out, f, d);
  out << "<h2>Node metrics</h2>";
  for (const auto& t : d.node_tables) metric_section(out, t, "node", svg_strip_plot(t));
  if (!d.capacity_tables.empty())
    out << "<h2>Links</h2><p class=\"note\">A node's capacity is its best pair: all pairs slow = the node, one pair slow "
           "= the link. Heatmap: green at the median of the node capacities, red far below; a black edge marks a suspect pair.</p>";
  for (std::size_t i = 0; i < d.capacity_tables.size(); ++i) {
    metric_section(out, d.capacity_tables[i], "node (best pair)", svg_strip_plot(d.capacity_tables[i]));
    const std::vector<std::string> nodes = pair_nodes(f, d.pair_tables[i]);
    if (nodes.size() <= kMaxHeatmapNodes)
      out << "<h4>pairs</h4>" << svg_pair_heatmap(d.pair_tables[i], nodes);
    else
      out << "<p>" << d.pair_tables[i].rows.size() << " pairs among " << nodes.size() << " nodes: the heatmap is drawn up to "
          << kMaxHeatmapNodes << " nodes; the strip plot above shows each node's best pair, report.json every pair.</p>";
  }
  if (!d.group_tables.empty()) out << "<h2>Whole allocation and groups</h2>";
  for (const auto& t : d.group_tables) metric_section(out, t, "group", "");
  if (!d.notes.empty()) {
    out << "<h2>Notes</h2><ul>";
    for (const auto& n : d.notes) out << "<li>" << xml_escape(n) << "</li>";
    out << "</ul>";
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace gpucal::fleet
