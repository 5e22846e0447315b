#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include "app/fleet/report.h"

namespace gpucal::fleet {

std::string better_text(Better b) { return b == Better::higher ? "higher is better" : "lower is better"; }

std::string verdict_of(const Ranked& r) {
  if (r.outlier && r.meets_floor && !*r.meets_floor) return "SUSPECT (outlier, below floor)";
  if (r.outlier) return "SUSPECT (outlier)";
  if (r.meets_floor && !*r.meets_floor) return "SUSPECT (below floor)";
  return "ok";
}

std::string deviation_text(const Ranked& r) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.0f%%", 100 * r.deviation);
  return text;
}

std::string suspect_line(const Suspect& s) {
  std::string line = s.subject + " [" + s.kind + "]";
  if (!s.metric.empty()) {
    line += " " + s.metric + " " + (s.value ? format_value(*s.value) : "-") + " " + s.unit;
    if (s.median) line += " (fleet median " + format_value(*s.median) + ")";
  }
  return line + ": " + s.reason;
}

std::vector<std::string> pair_nodes(const FleetDir& f, const MetricTable& pairs) {
  std::set<std::string> present;
  for (const Ranked& r : pairs.rows) {
    const auto dash = r.subject.find("--");
    present.insert(r.subject.substr(0, dash));
    present.insert(r.subject.substr(dash + 2));
  }
  std::vector<std::string> names;
  for (const auto& n : f.nodes)
    if (present.erase(n.name)) names.push_back(n.name);
  names.insert(names.end(), present.begin(), present.end());
  return names;
}

PairIndex::PairIndex(const MetricTable& pairs) {
  for (const Ranked& r : pairs.rows) rows_[r.subject] = &r;
}

const Ranked* PairIndex::find(const std::string& a, const std::string& b) const {
  for (const std::string& key : {a + "--" + b, b + "--" + a})
    if (const auto it = rows_.find(key); it != rows_.end()) return it->second;
  return nullptr;
}

namespace {

std::string z_text(double z) {
  if (std::isinf(z)) return z > 0 ? "+inf" : "-inf";
  char text[16];
  std::snprintf(text, sizeof text, "%+.1f", z);
  return text;
}

void table_markdown(std::ostringstream& out, const MetricTable& t, const std::string& subject) {
  out << "\n### " << t.metric << " (" << t.unit << ", " << better_text(t.better) << ")\n\n";
  if (t.reference)
    out << "Fleet median " << format_value(t.reference->median) << ", robust sigma " << format_value(t.reference->sigma)
        << " over " << t.reference->count << "; ";
  out << "floor " << (t.floor ? format_value(*t.floor) + " (" + t.floor_source + ")" : std::string("none")) << "; typical "
      << (t.typical ? format_value(*t.typical) + " (" + t.typical_source + ")" : std::string("none")) << ".\n\n";
  out << "| " << subject << " | value | vs median | robust z | verdict |\n| --- | --- | --- | --- | --- |\n";
  for (const Ranked& r : t.rows)
    out << "| " << r.subject << " | " << format_value(r.value) << " | " << deviation_text(r) << " | " << z_text(r.z)
        << " | " << verdict_of(r) << " |\n";
}

void header_markdown(std::ostringstream& out, const FleetDir& f, const Diagnosis& d) {
  const auto& m = f.manifest;
  out << "# gpucal fleet report: " << f.path << "\n\n";
  if (m.is_object()) {
    // A field fleet.json leaves empty or out is left out of the line, word and all: no "Cluster ,".
    std::string line;
    for (const auto& [key, word] : {std::pair{"cluster", "cluster "}, {"suite", "suite "}, {"launcher", "launcher "},
                                    {"start_time", "started "}, {"end_time", "ended "}, {"git_commit", "gpucal "}}) {
      const std::string field = m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : "";
      if (!field.empty()) line += (line.empty() ? "" : ", ") + std::string(word) + field;
    }
    if (!line.empty()) out << static_cast<char>(std::toupper(static_cast<unsigned char>(line[0]))) << line.substr(1) << ".\n";
  }
  out << f.nodes.size() << " node(s); outlier rule: robust z beyond " << format_value(d.options.z_threshold)
      << " (for " << d.figures_ranked << " figures ranked) and worse than the median by the factor " << format_value(1 - d.options.min_deviation)
      << (d.options.gross_factor > 1 ? ", or worse by the factor " + format_value(d.options.gross_factor) + " whatever the z"
                                     : std::string())
      << "; figures at the " << (d.options.statistic == "best" ? "fastest sample" : "median time")
      << "; expectations: " << d.options.expect << ".\n\n## Suspects\n\n";
  if (d.suspects.empty()) out << "None: every node and link is within the fleet's spread and above its floors.\n";
  else {
    out << "| subject | kind | metric | value | fleet median | reason |\n| --- | --- | --- | --- | --- | --- |\n";
    for (const auto& s : d.suspects)
      out << "| " << s.subject << " | " << s.kind << " | " << (s.metric.empty() ? "-" : s.metric) << " | "
          << (s.value ? format_value(*s.value) + " " + s.unit : "-") << " | " << (s.median ? format_value(*s.median) : "-")
          << " | " << s.reason << " |\n";
  }
}

void nodes_markdown(std::ostringstream& out, const FleetDir& f, const Diagnosis& d) {
  out << "\n## Nodes\n\n| node | status | device | SKU | metrics | detail |\n| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& n : f.nodes) {
    const auto sku = d.sku_of_node.find(n.name);
    out << "| " << n.name << " | " << n.status << " | " << (n.identity.device_name.empty() ? "-" : n.identity.device_name)
        << " | " << (sku == d.sku_of_node.end() || sku->second.empty() ? "-" : sku->second) << " | " << n.metrics.size()
        << " | " << (n.detail.empty() ? "-" : n.detail) << " |\n";
  }
}

void pair_matrix_markdown(std::ostringstream& out, const FleetDir& f, const MetricTable& t) {
  const std::vector<std::string> nodes = pair_nodes(f, t);
  if (nodes.size() > kMaxMatrixNodes) {
    std::vector<std::string> slow;
    for (const Ranked& r : t.rows)
      if (r.suspect) slow.push_back(r.subject + " " + format_value(r.value));
    out << "\nPairs (" << t.metric << "): " << t.rows.size() << " measured among " << nodes.size()
        << " nodes (the matrix is drawn up to " << kMaxMatrixNodes << "; report.json has every pair); suspect: ";
    for (std::size_t i = 0; i < slow.size() && i < 20; ++i) out << (i ? ", " : "") << slow[i];
    out << (slow.empty() ? "none" : slow.size() > 20 ? " and " + std::to_string(slow.size() - 20) + " more" : "") << "\n";
    return;
  }
  const PairIndex index(t);
  out << "\nPairs (" << t.metric << "; * marks a suspect pair):\n\n|  |";
  for (const auto& n : nodes) out << " " << n << " |";
  out << "\n| --- |";
  for (std::size_t i = 0; i < nodes.size(); ++i) out << " --- |";
  out << "\n";
  for (const auto& a : nodes) {
    out << "| " << a << " |";
    for (const auto& b : nodes) {
      std::string cell = a == b ? "-" : "";
      if (const Ranked* r = index.find(a, b)) cell = format_value(r->value) + (r->suspect ? "*" : "");
      out << " " << cell << " |";
    }
    out << "\n";
  }
}

void schedule_markdown(std::ostringstream& out, const FleetDir& f) {
  if (!f.manifest.is_object() || !f.manifest.contains("schedule")) return;
  const auto& s = f.manifest["schedule"];
  out << "\n## Link schedule\n\nPattern " << s.value("pattern", "-") << ", " << s.value("rounds", nlohmann::json::array()).size()
      << " round(s) over " << s.value("nodes", nlohmann::json::array()).size() << " node(s):\n\n";
  int r = 0;
  for (const auto& round : s.value("rounds", nlohmann::json::array())) {
    out << "- round " << ++r << ":";
    for (const auto& p : round) out << " " << p[0].get<std::string>() << "-" << p[1].get<std::string>();
    out << "\n";
  }
}

}  // namespace

std::string report_markdown(const FleetDir& f, const Diagnosis& d) {
  std::ostringstream out;
  header_markdown(out, f, d);
  nodes_markdown(out, f, d);
  out << "\n## Node metrics\n";
  for (const auto& t : d.node_tables) table_markdown(out, t, "node");
  if (!d.capacity_tables.empty()) out << "\n## Links\n\nA node's capacity is its best pair: all pairs slow = the node; one pair slow = the link.\n";
  for (std::size_t i = 0; i < d.capacity_tables.size(); ++i) {
    table_markdown(out, d.capacity_tables[i], "node (best pair)");
    pair_matrix_markdown(out, f, d.pair_tables[i]);
  }
  if (!d.group_tables.empty()) out << "\n## Whole allocation and groups\n";
  for (const auto& t : d.group_tables) table_markdown(out, t, "group");
  schedule_markdown(out, f);
  if (!d.notes.empty()) {
    out << "\n## Notes\n\n";
    for (const auto& n : d.notes) out << "- " << n << "\n";
  }
  return out.str();
}

std::string report_summary(const FleetDir& f, const Diagnosis& d) {
  std::ostringstream out;
  int measured = 0;
  for (const auto& n : f.nodes) measured += !n.metrics.empty();
  out << "gpucal fleet report " << f.path << ": " << f.nodes.size() << " node(s), " << measured << " measured, "
      << f.pairs.size() << " pair(s), " << d.suspects.size() << " finding(s)\n";
  const auto nodes = d.suspect_nodes();
  const auto links = d.suspect_links();
  out << "  suspect nodes: ";
  for (std::size_t i = 0; i < nodes.size(); ++i) out << (i ? ", " : "") << nodes[i];
  out << (nodes.empty() ? "none" : "") << "\n  suspect links: ";
  for (std::size_t i = 0; i < links.size(); ++i) out << (i ? ", " : "") << links[i];
  out << (links.empty() ? "none" : "") << "\n";
  for (const auto& s : d.suspects) out << "  " << suspect_line(s) << "\n";
  return out.str();
}

}  // namespace gpucal::fleet
