#include "app/history/diagnosis.h"

#include "app/report/junit.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace gpucal::fleet {

std::vector<std::string> Diagnosis::suspect_nodes() const {
  std::vector<std::string> names;
  for (const auto& s : suspects)
    if (s.kind != "link" && s.kind != "group" && s.kind != "phase" &&
        std::find(names.begin(), names.end(), s.subject) == names.end())
      names.push_back(s.subject);
  return names;
}

std::vector<std::string> Diagnosis::suspect_links() const {
  std::vector<std::string> links;
  for (const auto& s : suspects)
    if (s.kind == "link") links.push_back(s.subject);
  return links;
}

namespace {

// The expectations per node: by --expect FILE for all, or by each node's device.
struct ExpectationsBySku {
  std::map<std::string, check::Expectations> by_node;
};

// An expectations file from `gpucal fleet baseline --statistic S` holds figures read as S; a
// report reading the other statistic compares unlike figures, and says so (once per file).
void note_statistic(const check::Expectations& x, const DiagnosisOptions& o, Diagnosis& d) {
  const auto& by = x.document.is_object() ? x.document.value("generated_by", nlohmann::json()) : nlohmann::json();
  const std::string made = by.is_object() ? by.value("statistic", "") : "";
  if (made.empty() || made == o.statistic) return;
  const std::string note = x.path + ": made from " + made + " figures (gpucal fleet baseline --statistic " + made +
                           "), this report reads " + o.statistic + " figures: its floors compare unlike figures";
  if (std::find(d.notes.begin(), d.notes.end(), note) == d.notes.end()) d.notes.push_back(note);
}

ExpectationsBySku expectations_for(const FleetDir& f, const DiagnosisOptions& o, Diagnosis& d) {
  ExpectationsBySku e;
  if (o.expect == "none") return e;
  std::vector<check::Expectations> shipped;
  if (o.expect == "auto") shipped = check::read_expectations_dir(check::find_expectations_dir());
  const std::optional<check::Expectations> given =
      o.expect == "auto" ? std::nullopt : std::optional(check::read_expectations(o.expect));
  for (const auto& n : f.nodes) {
    std::optional<check::Expectations> x = given;
    if (!x && !n.identity.device_name.empty()) x = check::match_sku(shipped, n.identity.device_name, n.identity.backend);
    d.sku_of_node[n.name] = x ? x->sku : "";
    if (x) e.by_node.emplace(n.name, *x);
    if (x) note_statistic(*x, o, d);
    else if (!n.metrics.empty())
      d.notes.push_back(n.name + ": no expectations match '" + n.identity.device_name + "' (" + n.identity.backend +
                        "): ranked against the fleet only");
  }
  return e;
}

// A figure between two nodes (internode_*, allreduce_*_nodes<M>): the only kind of figure a link
// pair's floor can be. A pair measured with both ranks on one host (a local rehearsal) reports
// intra-node ids such as p2p_bw_gbps, but the SKU's (or fleet baseline's) floor of that id is a
// node's own figure, a different quantity: it is not applied to pairs or their capacities.
bool between_nodes(const std::string& metric) {
  return metric.rfind("internode_", 0) == 0 || metric.find("_nodes") != std::string::npos || rail_of(metric) >= 0;
}

// Applies each subject's floor to its row; `floor_owner` maps a subject to the node whose SKU counts.
void apply_floors(MetricTable& t, const ExpectationsBySku& e, const std::map<std::string, std::string>& floor_owner) {
  for (Ranked& r : t.rows) {
    const auto owner = floor_owner.find(r.subject);
    if (owner == floor_owner.end()) continue;
    const auto x = e.by_node.find(owner->second);
    if (x == e.by_node.end()) continue;
    const auto m = x->second.metrics.find(t.metric);
    if (m == x->second.metrics.end()) continue;
    t.typical = m->second.typical.value;
    t.typical_source = m->second.typical.source;
    if (!m->second.floor.value) continue;
    t.floor = m->second.floor.value;
    t.floor_source = m->second.floor.source;
    r.meets_floor = check::meets(r.value, *m->second.floor.value, t.better);
    r.suspect = r.suspect || !*r.meets_floor;
  }
}

std::string percent(double deviation) {
  char text[64];
  std::snprintf(text, sizeof text, "%.0f%% %s the fleet median", std::fabs(100 * deviation),
                deviation < 0 ? "below" : "above");
  return text;
}

std::string reason_of(const Ranked& r, const MetricTable& t) {
  std::string why;
  if (r.outlier) {
    char z[48];
    std::snprintf(z, sizeof z, "robust z %.1f, ", r.z);
    why = z + percent(r.deviation);
    if (r.gross) {
      const double m = t.reference->median;
      const double times = t.better == Better::higher ? m / r.value : r.value / m;
      char gross[96];
      std::snprintf(gross, sizeof gross, "; %.3g times %s than the median, beyond the gross factor %g", times,
                    t.better == Better::higher ? "lower" : "higher", t.gross_factor);
      why += gross;
    }
  }
  if (r.meets_floor && !*r.meets_floor)
    why += (why.empty() ? "" : "; ") + std::string("misses the SKU floor ") + format_value(*t.floor) + " " + t.unit +
           " (" + t.floor_source + ")";
  return why;
}

Suspect suspect_of(const Ranked& r, const MetricTable& t, const std::string& kind, const std::string& prefix) {
  return Suspect{r.subject, kind, t.metric, t.unit, r.value,
                 t.reference ? std::optional(t.reference->median) : std::nullopt, prefix + reason_of(r, t)};
}

// What the node phase's health checks could not say: nodes that expose none of them, nodes
// without a verdict while others have one.
void health_notes(const FleetDir& f, Diagnosis& d) {
  std::vector<std::string> nothing, missing;
  bool any = false;
  for (const auto& n : f.nodes) {
    any |= !n.health.empty();
    if (n.health == "nothing checked") nothing.push_back(n.name);
    if (n.health.empty() && n.status == "ok") missing.push_back(n.name);
  }
  auto listed = [](const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size() && i < 5; ++i) out += (i ? ", " : "") + v[i];
    return v.size() > 5 ? out + " and " + std::to_string(v.size() - 5) + " more" : out;
  };
  if (!nothing.empty())
    d.notes.push_back("health: " + std::to_string(nothing.size()) + " node(s) expose none of the health checks (" +
                      listed(nothing) + "): nodes/<name>.health.json says why for each");
  if (any && !missing.empty())
    d.notes.push_back("health: no verdict from " + std::to_string(missing.size()) + " node(s) (" + listed(missing) + ")");
}

void diagnose_nodes(const FleetDir& f, const ExpectationsBySku& e, Diagnosis& d) {
  std::map<std::string, std::map<std::string, double>> by_metric;
  std::map<std::string, std::string> owner;
  for (const auto& n : f.nodes) {
    owner[n.name] = n.name;
    for (const auto& [id, m] : n.metrics) by_metric[id][n.name] = m.value;
    if (n.status != "ok")
      d.suspects.push_back({n.name, n.status, "", "", std::nullopt, std::nullopt,
                            n.detail.empty() ? n.status : n.status + ": " + n.detail});
    // A failed health check names the node whatever its speed (gpucal check --health).
    if (n.health == "fail")
      d.suspects.push_back({n.name, "health", n.health_reason.substr(0, n.health_reason.find(' ')), "", std::nullopt,
                            std::nullopt, "health check failed: " + n.health_reason});
  }
  health_notes(f, d);
  for (const auto& [id, values] : by_metric) {
    if (d.options.ignored(id)) continue;
    MetricTable t = rank_metric(id, metric_kind(id).better, values, std::nullopt, d.options);
    apply_floors(t, e, owner);
    for (const Ranked& r : t.rows)
      if (r.suspect) d.suspects.push_back(suspect_of(r, t, "node", ""));
    d.node_tables.push_back(std::move(t));
  }
}

struct PairValue {
  std::string a, b;
  double value;
};

// One link metric between the passes: its capacities ranked, its pairs to rank once every link
// metric has named its slow nodes.
struct LinkMetric {
  std::string id;
  std::vector<PairValue> pairs;
  MetricTable cap;
  std::set<std::string> slow_nodes;
  std::map<std::string, std::string> owner;
  const ExpectationsBySku* floors = nullptr;  // SKU floors for a between-nodes metric, none for a node's own
};

// A node's capacity is its best pair; a node whose capacity is an outlier has every pair slow.
LinkMetric rank_capacities(const std::string& id, std::vector<PairValue> pairs, const ExpectationsBySku& e,
                           const ExpectationsBySku& none, Diagnosis& d) {
  LinkMetric m{id, std::move(pairs)};
  const Better better = metric_kind(id).better;
  std::map<std::string, double> capacity;
  std::map<std::string, int> count;
  for (const auto& p : m.pairs) {
    for (const std::string& node : {p.a, p.b}) {
      auto [it, fresh] = capacity.try_emplace(node, p.value);
      if (!fresh) it->second = better == Better::higher ? std::max(it->second, p.value) : std::min(it->second, p.value);
      ++count[node];
      m.owner[node] = node;
    }
    m.owner[link_folder_name(p.a, p.b)] = p.a;
  }
  m.cap = rank_metric(id, better, capacity, std::nullopt, d.options);
  m.floors = between_nodes(id) ? &e : &none;
  const bool has_floor = std::any_of(e.by_node.begin(), e.by_node.end(), [&](const auto& x) {
    const auto f = x.second.metrics.find(id);
    return f != x.second.metrics.end() && f->second.floor.value;
  });
  if (!between_nodes(id) && has_floor)
    d.notes.push_back(id + ": the pairs measured a node's own quantity (both ranks on one host); its node floor is not "
                      "applied to pairs, which are ranked against each other only");
  apply_floors(m.cap, *m.floors, m.owner);
  // On a rail metric, a node whose every pair is slow has a bad rail: its rank (GPU) of that index,
  // or the NIC, cable or switch port that rank's traffic takes.
  const int rail = rail_of(id);
  const std::string rail_words = rail < 0 ? "" : "rail " + std::to_string(rail) + " (its rank " + std::to_string(rail) +
                                                     " on the node: GPU " + std::to_string(rail) + " and its NIC): ";
  for (const Ranked& r : m.cap.rows)
    if (r.suspect) {
      m.slow_nodes.insert(r.subject);
      const std::string all = count[r.subject] == 1 ? "its only measured pair is slow (node or link: one pair cannot tell): "
                                                    : "all " + std::to_string(count[r.subject]) + " of its pairs slow, best pair ";
      d.suspects.push_back(suspect_of(r, m.cap, rail < 0 ? "node links" : "rail",
                                      rail_words + all + format_value(r.value) + " " + m.cap.unit + ": "));
    }
  return m;
}

using NamePair = std::pair<std::string, std::string>;
// A slow or failing pair before nodes are told apart from links: its suspect as a link, and what
// it says in a node's reason.
struct LinkFinding {
  Suspect as_link;
  std::string text;
};
using LinkFindings = std::map<NamePair, std::vector<LinkFinding>>;

// Pairs against the pairs between nodes that are not named: a node's best pair is above its typical
// pair, so the capacities' median would make ordinary pairs look slow. Nodes already named (by any
// metric: a slow node figure, hung, failed, a slow capacity) explain their slow pairs: a CPU held
// back slows its links too, so those pairs are neither the reference nor findings (a note says which).
void rank_pairs(LinkMetric& m, const std::set<std::string>& named, Diagnosis& d, LinkFindings& findings) {
  std::map<std::string, double> by_pair;
  std::vector<double> healthy;
  for (const auto& p : m.pairs) {
    by_pair[link_folder_name(p.a, p.b)] = p.value;
    if (!named.count(p.a) && !named.count(p.b)) healthy.push_back(p.value);
  }
  const auto reference = static_cast<int>(healthy.size()) >= d.options.min_count ? tied_robust_reference(healthy) : m.cap.reference;
  MetricTable pair_table = rank_metric(m.id, metric_kind(m.id).better, by_pair, reference, d.options);
  apply_floors(pair_table, *m.floors, m.owner);
  for (const Ranked& r : pair_table.rows) {
    const auto dash = r.subject.find("--");
    std::string a = r.subject.substr(0, dash), b = r.subject.substr(dash + 2);
    if (!r.suspect || m.slow_nodes.count(a) || m.slow_nodes.count(b)) continue;
    if (named.count(a) || named.count(b)) {
      d.notes.push_back(m.id + ": pair " + r.subject + " slow (" + format_value(r.value) + " " + pair_table.unit +
                        "), not named as a link: " + (named.count(a) ? a : b) + " is already a suspect node");
      continue;
    }
    if (b < a) std::swap(a, b);
    findings[{a, b}].push_back({suspect_of(r, pair_table, "link", "one pair slow while " + a + " and " + b +
                                                                      " reach the fleet median with their other pairs: "),
                                m.id + " " + format_value(r.value) + " " + pair_table.unit + ", " + reason_of(r, pair_table)});
  }
  d.capacity_tables.push_back(std::move(m.cap));
  d.pair_tables.push_back(std::move(pair_table));
}

// The manifest's steps (fleet.json); none when it has no such list. A damaged manifest is read as
// far as it goes, never thrown on: read a step's fields with step_text.
const nlohmann::json& manifest_steps(const FleetDir& f) {
  static const nlohmann::json none = nlohmann::json::array();
  const bool listed = f.manifest.is_object() && f.manifest.contains("steps") && f.manifest["steps"].is_array();
  return listed ? f.manifest["steps"] : none;
}

// A step's text field; "" when absent or not text (or the step is not an object).
std::string step_text(const nlohmann::json& s, const char* key) {
  return s.contains(key) && s[key].is_string() ? s[key].get<std::string>() : "";
}

// Link steps that failed or timed out (a crash, a hang the timeout ended, its retry): findings of
// their pair, not only notes. An operator's interrupt is none.
void failing_link_steps(const FleetDir& f, const std::set<std::string>& named, LinkFindings& findings) {
  std::map<NamePair, std::string> failing;  // pair -> "what status, ..."
  for (const nlohmann::json& s : manifest_steps(f)) {
    if (step_text(s, "phase") != "link" || !s.contains("nodes") || !s["nodes"].is_array() || s["nodes"].size() != 2 ||
        !s["nodes"][0].is_string() || !s["nodes"][1].is_string())
      continue;
    const std::string status = step_text(s, "status");
    if (status == "ok" || status == "interrupted") continue;
    const std::string what = step_text(s, "detail");
    auto a = s["nodes"][0].get<std::string>(), b = s["nodes"][1].get<std::string>();
    if (b < a) std::swap(a, b);
    if (named.count(a) || named.count(b)) continue;  // the node's own finding says why
    std::string& text = failing[{a, b}];
    text += (text.empty() ? "" : ", ") + (what.empty() ? "" : what + " ") + (status.empty() ? "no status" : status);
  }
  for (const auto& [pair, text] : failing)
    findings[pair].push_back({{.subject = link_folder_name(pair.first, pair.second),
                               .kind = "link",
                               .reason = "its link steps failed or timed out (" + text + ")"},
                              "steps " + text});
}

// The slow and failing pairs, told apart: a node in such pairs with two or more peers is the likelier
// fault than each of those links (a lossy port, a NIC that resets), named as the node (first the
// one with the most such peers), and the pairs it explains are not named again; every other such
// pair is a link suspect.
void name_link_findings(LinkFindings findings, Diagnosis& d) {
  while (true) {
    std::map<std::string, int> peers;
    for (const auto& [pair, what] : findings) ++peers[pair.first], ++peers[pair.second];
    std::string node;
    int most = 1;
    for (const auto& [n, c] : peers)
      if (c > most) node = n, most = c;
    if (node.empty()) break;
    Suspect s{.subject = node, .kind = "node links",
              .reason = "slow or failing with " + std::to_string(most) + " of its peers, the node they share ("};
    std::string sep;
    for (auto it = findings.begin(); it != findings.end();) {
      const auto& [a, b] = it->first;
      if (a != node && b != node) {
        ++it;
        continue;
      }
      for (const LinkFinding& x : it->second) {
        const Suspect& l = x.as_link;
        if (s.metric.empty()) s.metric = l.metric, s.unit = l.unit, s.value = l.value, s.median = l.median;
        s.reason += sep + (a == node ? b : a) + ": " + x.text;
        sep = "; ";
      }
      it = findings.erase(it);
    }
    s.reason += ")";
    d.suspects.push_back(std::move(s));
  }
  for (const auto& [pair, what] : findings)
    for (const LinkFinding& x : what) d.suspects.push_back(x.as_link);
}

// Last, a node's typical pair (typical_pair_of_nodes: its share of every pair it is in, with a
// typical peer), for the nodes nothing named yet: one whose best pair a lucky sample lifted, or one
// in half the pairs (of 4 nodes, a node is in 3 of the 6 pairs: it moves their median, so neither
// its pairs nor its capacity stand out) still shows slow here.
void rank_typical_pairs(const LinkMetric& m, Diagnosis& d) {
  const std::vector<std::string> named = d.suspect_nodes();
  std::vector<std::tuple<std::string, std::string, double>> values;
  std::map<std::string, int> count;
  for (const auto& p : m.pairs) values.emplace_back(p.a, p.b, p.value), ++count[p.a], ++count[p.b];
  const MetricTable typical =
      rank_metric(m.id, metric_kind(m.id).better, typical_pair_of_nodes(values), std::nullopt, d.options);
  const int rail = rail_of(m.id);
  const std::string rail_words = rail < 0 ? "" : "rail " + std::to_string(rail) + ": ";
  for (const Ranked& r : typical.rows)
    if (r.suspect && count[r.subject] >= 2 && std::find(named.begin(), named.end(), r.subject) == named.end())
      d.suspects.push_back(suspect_of(r, typical, rail < 0 ? "node links" : "rail",
                                      rail_words + "its pairs typically " + format_value(r.value) + " " + typical.unit +
                                          " (its share of all " + std::to_string(count[r.subject]) + " of them): "));
}

void diagnose_links(const FleetDir& f, const ExpectationsBySku& e, Diagnosis& d) {
  std::map<std::string, std::vector<PairValue>> by_metric;
  for (const auto& p : f.pairs) {
    for (const auto& [id, m] : p.metrics) by_metric[id].push_back({p.a, p.b, m.value});
    if (p.status != "ok" && p.status != "not measured")
      d.notes.push_back("pair " + link_folder_name(p.a, p.b) + ": " + p.status + (p.detail.empty() ? "" : ": " + p.detail));
  }
  const ExpectationsBySku none;
  std::vector<LinkMetric> metrics;
  for (auto& [id, pairs] : by_metric)
    if (!d.options.ignored(id)) metrics.push_back(rank_capacities(id, std::move(pairs), e, none, d));
  const std::vector<std::string> named_nodes = d.suspect_nodes();
  const std::set<std::string> named(named_nodes.begin(), named_nodes.end());
  LinkFindings findings;
  for (auto& m : metrics) rank_pairs(m, named, d, findings);
  failing_link_steps(f, named, findings);
  name_link_findings(std::move(findings), d);
  for (const auto& m : metrics) rank_typical_pairs(m, d);
}

void diagnose_groups(const FleetDir& f, Diagnosis& d) {
  std::map<std::string, std::map<std::string, double>> by_metric;
  for (const auto& g : f.groups)
    for (const auto& [id, m] : g.metrics) by_metric[id][g.name] = m.value;
  for (const auto& [id, values] : by_metric) {
    if (d.options.ignored(id)) continue;
    MetricTable t = rank_metric(id, metric_kind(id).better, values, std::nullopt, d.options);
    for (const Ranked& r : t.rows)
      if (r.suspect && r.subject != "fleet") d.suspects.push_back(suspect_of(r, t, "group", "a slow group: "));
    d.group_tables.push_back(std::move(t));
  }
}

}  // namespace

bool DiagnosisOptions::ignored(const std::string& metric) const {
  return std::find(ignore_metrics.begin(), ignore_metrics.end(), metric) != ignore_metrics.end();
}

namespace {
// A phase whose steps all failed or timed out measured nothing: a finding, so the run's exit
// says so (a night whose links were never measured is not a healthy night).
void diagnose_phases(const FleetDir& f, Diagnosis& d) {
  std::map<std::string, std::pair<int, int>> by_phase;  // phase -> (steps, ok)
  std::map<std::string, std::string> first_failure;
  for (const nlohmann::json& s : manifest_steps(f)) {
    const std::string phase = step_text(s, "phase");
    if (phase.empty() || phase == "probe") continue;  // a probe that fails names its node, not a phase
    const std::string status = step_text(s, "status");
    auto& [steps, ok] = by_phase[phase];
    ++steps;
    ok += status == "ok";
    if (status != "ok" && !first_failure.count(phase)) {
      std::string what = status.empty() ? "no status" : status;
      if (const std::string log = step_text(s, "log"); !log.empty()) what += " (" + log + ")";
      first_failure[phase] = what;
    }
  }
  for (const auto& [phase, counts] : by_phase)
    if (counts.second == 0 && phase != "node")  // a node step that failed names its node already
      d.suspects.push_back({.subject = phase + " phase",
                            .kind = "phase",
                            .reason = "measured nothing: every one of its " + std::to_string(counts.first) +
                                      " step(s) failed or timed out (first: " + first_failure[phase] + ")"});
}
}  // namespace

double outlier_z(double z_floor, std::size_t figures) {
  // One-sided: only the bad direction counts.
  return multiple_test_z(kFalseSuspectsPerReport, figures, /*two_sided=*/false, z_floor);
}

Diagnosis diagnose(const FleetDir& f, const DiagnosisOptions& o) {
  Diagnosis d;
  d.options = o;
  // Every figure ranked is a chance for noise to pass the threshold: raise it with their number.
  std::size_t figures = 0;
  for (const auto& n : f.nodes)
    for (const auto& [id, m] : n.metrics) figures += !o.ignored(id);
  for (const auto& p : f.pairs)
    for (const auto& [id, m] : p.metrics) figures += !o.ignored(id);
  d.figures_ranked = figures;
  d.options.z_threshold = outlier_z(o.z_threshold, figures);
  for (const auto& m : o.ignore_metrics) check_metric_id("--ignore-metrics", m);
  if (!o.ignore_metrics.empty()) {
    std::string list;
    for (const auto& m : o.ignore_metrics) list += (list.empty() ? "" : ", ") + m;
    d.notes.push_back("left out of the ranking (--ignore-metrics): " + list);
  }
  const ExpectationsBySku e = expectations_for(f, o, d);
  diagnose_nodes(f, e, d);
  diagnose_links(f, e, d);
  diagnose_groups(f, d);
  diagnose_phases(f, d);
  int measured = 0;
  for (const auto& n : f.nodes) measured += !n.metrics.empty();
  if (!node_phase_ran(f.manifest))
    d.notes.push_back("the node phase did not run (fleet run --phases): nodes are judged by their links only");
  else if (measured < o.min_count)
    d.notes.push_back(std::to_string(measured) + " node(s) measured: fewer than " + std::to_string(o.min_count) +
                      ", so nodes are checked against their SKU floors only, not ranked");
  return d;
}

}  // namespace gpucal::fleet
