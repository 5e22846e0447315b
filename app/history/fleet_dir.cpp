#include "app/history/fleet_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "app/common/calibration_json.h"
#include "app/common/results_dir.h"
#include "core/output/file_io.h"

namespace gpucal::fleet {

namespace fs = std::filesystem;
using nlohmann::json;

std::string link_folder_name(const std::string& a, const std::string& b) { return a + "--" + b; }

const NodeResults* FleetDir::find(const std::string& name) const {
  for (const auto& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

namespace {

json read_manifest(const fs::path& file) {
  if (!fs::exists(file)) return nullptr;
  if (const std::string why = not_a_regular_file(file.string()); !why.empty())
    throw std::invalid_argument(file.string() + ": " + why);
  std::ifstream in(file);
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw std::invalid_argument(file.string() + ": malformed JSON: " + calibration::json_parse_error_text(e));
  }
  if (!doc.is_object() || !doc.contains("fleet_schema_version") || !doc["fleet_schema_version"].is_number_integer() ||
      doc["fleet_schema_version"] != kFleetSchemaVersion)
    throw std::invalid_argument(file.string() + ": fleet_schema_version must be " + std::to_string(kFleetSchemaVersion));
  // The parts the report reads, each of the type it reads: one line naming the field, never the
  // JSON library's type error.
  auto bad = [&](const std::string& what) { throw std::invalid_argument(file.string() + ": " + what); };
  for (const char* list : {"nodes", "steps"}) {
    if (!doc.contains(list)) continue;
    if (!doc[list].is_array()) bad(std::string("'") + list + "' must be an array of objects");
    for (std::size_t i = 0; i < doc[list].size(); ++i) {
      const json& item = doc[list][i];
      const std::string where = std::string(list) + "[" + std::to_string(i) + "]";
      if (!item.is_object()) bad(where + " must be an object");
      for (const char* key : {"name", "status", "detail", "phase", "log"})
        if (item.contains(key) && !item[key].is_string()) bad(where + "." + key + " must be a string");
    }
  }
  for (const char* key : {"start_time", "suite", "cluster", "launcher", "git_commit"})
    if (doc.contains(key) && !doc[key].is_string()) bad(std::string("'") + key + "' must be a string");
  return doc;
}

// Metrics of a results folder; an absent or unreadable folder gives none and a reason.
MetricSet folder_metrics(const fs::path& folder, Statistic statistic, RunIdentity* identity, std::string& error,
                         std::vector<std::string>& warnings) {
  if (!fs::is_directory(folder)) {
    error = "no results folder " + folder.string();
    return {};
  }
  try {
    const calibration::ResultsDir results = calibration::load_results_dir(folder.string(), /*allow_suspect=*/true);
    for (const auto& w : results.warnings) warnings.push_back(w);
    if (identity) *identity = identity_of(results);
    return metrics_of(results, statistic);
  } catch (const std::exception& e) {
    error = e.what();
    return {};
  }
}

// The node phase's health verdict, when the node wrote one; an unreadable file is a warning.
void read_node_health(const fs::path& file, NodeResults& node, std::vector<std::string>& warnings) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return;
  try {
    const nlohmann::json j = calibration::read_json_document(file.string());
    node.health = j.at("verdict").get<std::string>();
    node.health_reason = j.value("reason", "");
  } catch (const std::exception& e) {
    warnings.push_back(file.string() + ": not a health verdict (" + calibration::json_parse_error_text(e) + ")");
  }
}

}  // namespace

bool node_phase_ran(const nlohmann::json& manifest) {
  if (!manifest.is_object() || !manifest.contains("phases") || !manifest["phases"].is_array()) return true;
  for (const auto& p : manifest["phases"])
    if (p == "node") return true;
  return false;
}

namespace {

void load_nodes(FleetDir& f) {
  const bool measured = node_phase_ran(f.manifest);
  std::vector<std::string> names;
  if (f.manifest.is_object() && f.manifest.contains("nodes"))
    for (const auto& n : f.manifest["nodes"]) names.push_back(n.value("name", ""));
  std::vector<std::string> folders;
  if (fs::is_directory(fs::path(f.path) / "nodes"))
    for (const auto& e : fs::directory_iterator(fs::path(f.path) / "nodes"))
      if (e.is_directory()) folders.push_back(e.path().filename().string());
  std::sort(folders.begin(), folders.end());
  for (const auto& n : folders)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  for (std::size_t i = 0; i < names.size(); ++i) {
    NodeResults node;
    node.name = names[i];
    if (f.manifest.is_object() && i < f.manifest["nodes"].size() && f.manifest["nodes"][i].value("name", "") == node.name) {
      node.status = f.manifest["nodes"][i].value("status", "ok");
      node.detail = f.manifest["nodes"][i].value("detail", "");
    }
    node.metrics = folder_metrics(fs::path(f.path) / "nodes" / node.name, f.statistic, &node.identity, node.load_error, f.warnings);
    if (node.metrics.empty() && node.status == "ok" && measured) {
      node.status = "no results";
      node.detail = node.load_error;
    }
    read_node_health(fs::path(f.path) / "nodes" / (node.name + ".health.json"), node, f.warnings);
    f.nodes.push_back(std::move(node));
  }
}

// A pair's status: the last attempt of each of its steps (p2p, collectives; a second try replaces
// the first), the first of those that is not ok.
void pair_statuses(FleetDir& f, std::map<std::string, PairResults>& by_folder) {
  if (!f.manifest.is_object() || !f.manifest.contains("steps")) return;
  std::map<std::string, std::map<std::string, std::pair<std::string, std::string>>> last;  // folder -> what -> (status, what)
  for (const auto& s : f.manifest["steps"]) {
    if (s.value("phase", "") != "link" || !s.contains("nodes") || s["nodes"].size() != 2) continue;
    PairResults p{s["nodes"][0].get<std::string>(), s["nodes"][1].get<std::string>(), {}, "ok", ""};
    const std::string folder = link_folder_name(p.a, p.b);
    by_folder.try_emplace(folder, p);
    std::string what = s.value("detail", "");
    what = what.substr(0, what.find(" ("));
    last[folder][what] = {s.value("status", "ok"), s.value("detail", "")};
  }
  for (const auto& [folder, steps] : last)
    for (const auto& [what, status] : steps)
      if (status.first != "ok" && by_folder[folder].status == "ok") {
        by_folder[folder].status = status.first;
        by_folder[folder].detail = status.second;
      }
}

void load_pairs(FleetDir& f) {
  std::map<std::string, PairResults> by_folder;
  pair_statuses(f, by_folder);
  const fs::path links = fs::path(f.path) / "links";
  if (fs::is_directory(links))
    for (const auto& e : fs::directory_iterator(links)) {
      const std::string name = e.path().filename().string();
      const auto dash = name.find("--");
      if (!e.is_directory() || dash == std::string::npos) continue;
      by_folder.try_emplace(name, PairResults{name.substr(0, dash), name.substr(dash + 2), {}, "ok", ""});
    }
  for (auto& [folder, p] : by_folder) {
    std::string error;
    p.metrics = folder_metrics(links / folder, f.statistic, nullptr, error, f.warnings);
    // fleet run --rails: the rails step's own folder (rank i of each node, one rail at a time).
    if (fs::is_directory(links / folder / "rails")) {
      std::string rails_error;
      for (auto& [id, m] : folder_metrics(links / folder / "rails", f.statistic, nullptr, rails_error, f.warnings))
        if (rail_of(id) >= 0) p.metrics[id] = m;
      if (!rails_error.empty()) f.warnings.push_back(folder + "/rails: " + rails_error);
    }
    if (p.metrics.empty() && p.status == "ok") {
      p.status = "not measured";
      p.detail = error;
    }
    f.pairs.push_back(std::move(p));
  }
}

void load_groups(FleetDir& f) {
  const fs::path whole = fs::path(f.path) / "fleet";
  std::vector<std::string> all;
  for (const auto& n : f.nodes) all.push_back(n.name);
  std::string error;
  if (fs::is_directory(whole)) {
    MetricSet m = folder_metrics(whole, f.statistic, nullptr, error, f.warnings);
    if (!m.empty()) f.groups.push_back({"fleet", all, std::move(m)});
  }
  if (!f.manifest.is_object() || !f.manifest.contains("groups")) return;
  for (const auto& g : f.manifest["groups"]) {
    GroupResults group{g.value("name", ""), g.value("nodes", std::vector<std::string>{}), {}};
    group.metrics = folder_metrics(whole / "groups" / group.name, f.statistic, nullptr, error, f.warnings);
    if (!group.metrics.empty()) f.groups.push_back(std::move(group));
  }
}

}  // namespace

FleetDir load_fleet_dir(const std::string& path, Statistic statistic) {
  if (!fs::is_directory(path)) throw std::invalid_argument("FLEET_DIR: '" + path + "' is not a folder");
  FleetDir f;
  f.path = path;
  f.statistic = statistic;
  f.manifest = read_manifest(fs::path(path) / "fleet.json");
  if (f.manifest.is_null() && !fs::is_directory(fs::path(path) / "nodes"))
    throw std::invalid_argument("FLEET_DIR: '" + path + "' has neither fleet.json nor nodes/ (a `gpucal fleet run` folder)");
  load_nodes(f);
  load_pairs(f);
  load_groups(f);
  return f;
}

Manifest::Manifest(std::string path) : path_(std::move(path)) {
  doc_ = {{"fleet_schema_version", kFleetSchemaVersion}, {"nodes", json::array()}, {"steps", json::array()}};
}

void Manifest::save() const { write_file_atomic(path_, doc_.dump(2) + "\n"); }

json& Manifest::node(const std::string& name) {
  for (auto& n : doc_["nodes"])
    if (n.value("name", "") == name) return n;
  doc_["nodes"].push_back({{"name", name}, {"status", "ok"}, {"detail", ""}});
  return doc_["nodes"].back();
}

void Manifest::add_step(json step) {
  doc_["steps"].push_back(std::move(step));
  save();
}

}  // namespace gpucal::fleet
