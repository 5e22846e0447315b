#include "app/history/history_record.h"

#include <filesystem>
#include <set>

namespace gpucal::history {

namespace fs = std::filesystem;

namespace {

std::string absolute(const std::string& path) { return fs::weakly_canonical(fs::absolute(path)).string(); }

std::set<std::pair<std::string, std::string>> suspects_of(const fleet::Diagnosis& d) {
  std::set<std::pair<std::string, std::string>> flagged;  // (subject, metric)
  for (const auto& s : d.suspects) flagged.insert({s.subject, s.metric});
  return flagged;
}

}  // namespace

Recording recording_of(const fleet::FleetDir& f, const fleet::Diagnosis& d, const std::string& cluster) {
  Recording r;
  const auto& m = f.manifest;
  r.run.source = absolute(f.path);
  r.run.time = m.is_object() ? m.value("start_time", "") : "";
  r.run.git_commit = m.is_object() ? m.value("git_commit", "") : "";
  r.run.suite = m.is_object() ? m.value("suite", "") : "";
  r.run.cluster = !cluster.empty() ? cluster : (m.is_object() ? m.value("cluster", "") : "");
  const auto flagged = suspects_of(d);
  for (const auto& n : f.nodes) {
    if (r.run.time.empty()) r.run.time = n.identity.start_time;
    if (r.run.git_commit.empty()) r.run.git_commit = n.identity.git_commit;
    r.rows.push_back({n.name, "node_status", std::nullopt, "", n.status});
    for (const auto& [id, metric] : n.metrics)
      r.rows.push_back({n.name, id, metric.value, metric.unit, flagged.count({n.name, id}) ? "suspect" : "ok"});
  }
  for (const auto& p : f.pairs) {
    const std::string subject = fleet::link_folder_name(p.a, p.b);
    const bool node_fault = flagged.count({p.a, ""}) || flagged.count({p.b, ""});
    for (const auto& [id, metric] : p.metrics) {
      const bool slow = flagged.count({subject, id}) || flagged.count({p.a, id}) || flagged.count({p.b, id}) || node_fault;
      r.rows.push_back({subject, id, metric.value, metric.unit, slow ? "suspect" : "ok"});
    }
  }
  return r;
}

Recording recording_of_results(const std::string& results_dir, const std::string& cluster) {
  const calibration::ResultsDir results = calibration::load_results_dir(results_dir, /*allow_suspect=*/true);
  const fleet::RunIdentity who = fleet::identity_of(results);
  Recording r;
  r.run = {0, who.start_time, who.git_commit, "", cluster, absolute(results_dir)};
  const std::string node = !who.hostname.empty() ? who.hostname : fs::path(absolute(results_dir)).filename().string();
  for (const auto& [id, metric] : fleet::metrics_of(results)) r.rows.push_back({node, id, metric.value, metric.unit, "ok"});
  return r;
}

std::string import_folder(HistoryDb& db, const std::string& path, const std::string& cluster,
                          const fleet::DiagnosisOptions& options) {
  Recording r;
  if (fs::exists(fs::path(path) / "fleet.json") || fs::is_directory(fs::path(path) / "nodes")) {
    const fleet::FleetDir f = fleet::load_fleet_dir(path, fleet::statistic_from_string(options.statistic));
    r = recording_of(f, fleet::diagnose(f, options), cluster);
  } else {
    r = recording_of_results(path, cluster);
  }
  if (r.run.time.empty()) throw std::invalid_argument(path + ": no start time in its fleet.json or sidecars");
  const int64_t id = db.record(r.run, r.rows);
  return "run " + std::to_string(id) + " (" + r.run.time + "): " + std::to_string(r.rows.size()) + " figure(s) from " + path;
}

}  // namespace gpucal::history
