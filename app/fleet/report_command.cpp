#include "app/fleet/report_command.h"

#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>

#include "app/check/expectations.h"
#include "app/common/calibration_json.h"
#include "app/common/output_guard.h"
#include "app/fleet/drain.h"
#include "app/fleet/report.h"
#include "app/fleet/schedule.h"
#include "app/history/history_db.h"
#include "app/history/history_record.h"
#include "app/run/launch_plan.h"
#include "core/driver/flag_checks.h"
#include "core/output/file_io.h"

namespace gpucal::fleet {

namespace fs = std::filesystem;

void validate_report_options(const ReportOptions& options) {
  ReportOptions o = options;
  auto or_default = [&](std::string& path, const char* name) {
    if (path.empty() && !o.fleet_dir.empty()) path = (fs::path(o.fleet_dir) / name).string();
  };
  or_default(o.markdown, "report.md");
  or_default(o.html, "report.html");
  or_default(o.json, "report.json");
  or_default(o.junit, "report.junit.xml");
  const DiagnosisOptions& d = o.diagnosis;
  const bool expect_file = d.expect != "auto" && d.expect != "none";
  calibration::refuse_outputs_over_inputs(
      {{"--markdown", o.markdown}, {"--html", o.html}, {"--json", o.json}, {"--junit", o.junit}, {"--history", o.history},
       {"--prometheus", o.prometheus}},
      {.files = {expect_file ? d.expect : ""}, .folders = {o.fleet_dir}});
  statistic_from_string(d.statistic);
  for (const auto& m : d.ignore_metrics) check_metric_id("--ignore-metrics", m);
  if (expect_file) check::read_expectations(d.expect);
  if (!o.history.empty()) history::HistoryDb db(o.history);  // a corrupt or foreign file refused now, not after the night
  if (o.drain) {
    std::istringstream words(o.scontrol);
    std::string program;
    if (!(words >> program) || !calibration::program_found(program))
      throw std::invalid_argument("--drain: '" + o.scontrol + "' is not an executable file or on PATH (--scontrol names it)");
  }
}

int run_report(const ReportOptions& options, std::ostream& out) {
  ReportOptions o = options;
  auto or_default = [&](std::string& path, const char* name) {
    if (path.empty()) path = (fs::path(o.fleet_dir) / name).string();
  };
  or_default(o.markdown, "report.md");
  or_default(o.html, "report.html");
  or_default(o.json, "report.json");
  or_default(o.junit, "report.junit.xml");
  validate_report_options(o);
  const FleetDir f = load_fleet_dir(o.fleet_dir, statistic_from_string(o.diagnosis.statistic));
  const Diagnosis d = diagnose(f, o.diagnosis);
  write_file_atomic(o.markdown, report_markdown(f, d));
  write_file_atomic(o.html, report_html(f, d));
  calibration::write_json_file(report_json(f, d), o.json);
  write_file_atomic(o.junit, junit_xml("gpucal fleet " + f.path, report_junit(f, d)));
  if (!o.prometheus.empty()) write_prometheus(o.prometheus, report_prometheus(f, d, o.cluster));
  out << report_summary(f, d) << "  wrote " << o.markdown << ", " << o.html << ", " << o.json << ", " << o.junit
      << (o.prometheus.empty() ? "" : ", " + o.prometheus) << "\n";
  if (!o.history.empty()) {
    history::HistoryDb db(o.history);
    const history::Recording r = history::recording_of(f, d, o.cluster);
    if (r.run.time.empty()) throw std::invalid_argument("--history: " + o.fleet_dir + " has no start time to record");
    db.record(r.run, r.rows);
    out << "  recorded in " << o.history << "\n";
  }
  if (o.drain) {
    const std::string name = fs::path(o.fleet_dir).lexically_normal().filename().string();
    const std::vector<DrainAction> actions = drain_actions(d, name.empty() ? fs::path(o.fleet_dir).parent_path().filename().string() : name,
                                                           o.scontrol);
    if (actions.empty()) out << "  --drain: no node to drain\n";
    if (!d.suspect_links().empty()) out << "  --drain: links are not drained (a link names two nodes): see the pair table\n";
    if (drain_nodes(actions, out) > 0) return 1;
  }
  return d.suspects.empty() ? 0 : 1;
}

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string w;
  while (std::getline(in, w, ','))
    if (!w.empty()) out.push_back(w);
  return out;
}

}  // namespace

namespace {
constexpr long long kMaxPrintedPairs = 1000000;  // about 20 MB of text
}  // namespace

int run_schedule(const ScheduleOptions& o, std::ostream& out) {
  SchedulePattern pattern = parse_schedule_pattern(o.pattern);
  pattern.seed = o.seed;
  const std::vector<std::string> words = split(o.nodes);
  if (words.empty()) throw std::invalid_argument("--nodes: expected counts (4,8,16,64) or node names (a,b,c)");
  const bool counts = words[0].find_first_not_of("0123456789") == std::string::npos;
  std::vector<std::pair<int, std::vector<std::string>>> cases;
  if (counts)
    for (const auto& w : words) {
      if (const std::string why = check_number_text(w, true, {.min = 1, .max = 100000}); !why.empty())
        throw std::invalid_argument("--nodes: " + why);
      cases.push_back({std::stoi(w), {}});
    }
  else cases.push_back({static_cast<int>(words.size()), words});
  std::vector<ScheduleSummary> table;
  for (const auto& [n, names] : cases) {
    table.push_back(schedule_summary(n, pattern));
    if (o.summary) continue;
    if (const long long pairs = schedule_pair_count(n, pattern); pairs > kMaxPrintedPairs)
      throw std::invalid_argument("--nodes " + std::to_string(n) + ": " + to_string(pattern) + " has " + std::to_string(pairs) +
                                  " pairs, too many to print (at most " + std::to_string(kMaxPrintedPairs) +
                                  "); add --summary for the table of counts");
    const std::vector<Round> rounds = link_schedule(n, pattern);
    out << n << " nodes, " << to_string(pattern) << ": " << rounds.size() << " round(s)\n" << format_schedule(rounds, names);
    if (o.group_size > 0) {
      out << "fleet phase groups of " << o.group_size << ", measured at once:";
      for (const auto& g : disjoint_groups(n, o.group_size)) {
        out << " [";
        for (std::size_t i = 0; i < g.size(); ++i) out << (i ? " " : "") << (names.empty() ? std::to_string(g[i]) : names[static_cast<std::size_t>(g[i])]);
        out << "]";
      }
      out << "\n";
    }
    out << "\n";
  }
  out << "| nodes | pattern | rounds | pairs | pairs per round | covers every pair | one pair per node per round |\n"
      << "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& s : table)
    out << "| " << s.nodes << " | " << to_string(pattern) << " | " << s.rounds << " | " << s.pairs << " | " << s.max_per_round
        << " | " << (s.all_pairs ? "yes" : "no") << " | " << (s.one_pair_per_node ? "yes" : "no") << " |\n";
  if (std::any_of(table.begin(), table.end(), [](const ScheduleSummary& s) { return !s.checked; }))
    out << "\nRounds up to " << kExhaustiveNodes << " nodes are built and checked pair by pair; larger counts come from the "
        << "pattern's closed form (the circle method meets each pair in exactly one round).\n";
  return 0;
}

}  // namespace gpucal::fleet
