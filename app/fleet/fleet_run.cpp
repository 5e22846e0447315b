#include "core/driver/flag_checks.h"
#include "app/fleet/fleet_run.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "app/history/fleet_dir.h"
#include "app/fleet/schedule.h"
#include "app/run/bench_runner.h"
#include "app/run/run_suite.h"
#include "app/run/suites.h"
#include "core/output/metadata.h"
#include "gpucal/version.h"

namespace gpucal::fleet {

namespace fs = std::filesystem;
using calibration::shell_quote;
using nlohmann::json;

const FleetPlan& find_fleet_plan(const std::string& suite) {
  static const std::vector<FleetPlan> plans{
      {"fleet", "--pattern sendrecv,pingpong --sizes 8,256M", "--collective allreduce --ranks all --sizes 256M",
       "--collective allreduce,allgather --ranks all --sizes 1G", "--pattern rails --sizes 256M", 0.5},
      {"fleet-smoke", "--pattern sendrecv,pingpong --sizes 8,256K", "--collective allreduce --ranks all --sizes 1M",
       "--collective allreduce --ranks all --sizes 1M", "--pattern rails --sizes 256K", 1.0},
  };
  for (const auto& p : plans)
    if (p.suite == suite) return p;
  throw std::invalid_argument("--suite: fleet run knows the suites fleet and fleet-smoke, got '" + suite + "'");
}

int parse_rails(const std::string& text) {
  if (text == "auto") return -1;
  std::size_t used = 0;
  int n = -1;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || n < 0 || n > 1024)
    throw std::invalid_argument("--rails: expected auto or a count of rails per node from 0 (none) to 1024, got '" + text + "'");
  return n;
}

namespace {

struct Context {
  const FleetRunOptions& o;
  std::ostream& log;
  Manifest manifest;
  std::vector<std::string> nodes;
  std::set<std::string> hung;
  std::string gpucal, bench_p2p, bench_collectives;
  int rails = 0;  // resolved after the node phase
};

std::string fmt_s(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

// Why a step failed, as its log says: its first line with "error" (srun's "error: Task launch
// ... failed on node N: Communication connection failure", gpucal's "error: ..."), else the last
// line that reads as a failure (an MPI abort, "killed"), else the last line; "" for an empty log.
std::string log_cause(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, last, first_error, last_failure;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty()) continue;
    last = line;
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (first_error.empty() && lower.find("error") != std::string::npos) first_error = line;
    for (const char* word : {"unable", "abort", "killed", "not responding", "refused", "denied", "failed"})
      if (lower.find(word) != std::string::npos) last_failure = line;
  }
  std::string cause = !first_error.empty() ? first_error : !last_failure.empty() ? last_failure : last;
  if (cause.size() > 200) cause = cause.substr(0, 197) + "...";
  return cause;
}

std::string step_status(const StepOutcome& r) {
  if (r.interrupted) return "interrupted";
  if (r.timed_out) return "timed out";
  return r.status == 0 ? "ok" : "failed";
}

void record(Context& c, const std::string& phase, int round, const std::vector<std::string>& nodes, const Step& s,
            const StepOutcome& r, const std::string& out, const std::string& detail) {
  c.manifest.add_step({{"phase", phase}, {"round", round}, {"nodes", nodes}, {"status", step_status(r)},
                       {"rc", r.status}, {"seconds", r.seconds}, {"out", out}, {"log", s.log_path},
                       {"command", s.command}, {"detail", detail}});
}

// Probes the nodes of timed-out steps, and the nodes whose node step failed; those that do not
// answer become hung (a failed node keeps its status, its detail says why it was left out): the
// link and fleet phases leave them out, where every step with them would fail too.
void probe(Context& c, const std::set<std::string>& suspects, const std::string& phase, int round) {
  if (suspects.empty()) return;
  std::vector<Step> steps;
  std::vector<std::string> names(suspects.begin(), suspects.end());
  fs::create_directories(fs::path(c.o.out_dir) / "logs");
  for (const auto& n : names)
    steps.push_back({probe_command(c.o.launcher, n), (fs::path(c.o.out_dir) / "logs" / ("probe-" + n + ".log")).string(),
                     c.o.probe_timeout_s, private_tmpdir_variable(c.o.launcher)});
  const auto results = run_steps(steps);
  for (std::size_t i = 0; i < names.size(); ++i) {
    record(c, "probe", round, {names[i]}, steps[i], results[i], "", "");
    if (results[i].status == 0) continue;
    c.hung.insert(names[i]);
    json& node = c.manifest.node(names[i]);
    if (node.value("status", "") == "failed") {
      node["detail"] = node.value("detail", "") + "; no answer to a probe: left out of the link and fleet phases";
      c.log << "  " << names[i] << ": failed, no answer to a probe: left out of the link and fleet phases\n";
      continue;
    }
    node["status"] = "hung";
    node["detail"] = "no answer to a probe after a " + phase + " step timed out" +
                     (round > 0 ? " (round " + std::to_string(round) + ")" : "");
    c.log << "  " << names[i] << ": hung (no answer to a probe)\n";
  }
  c.manifest.save();
}

std::string node_phase_command(const Context& c, const std::string& node) {
  const fs::path out = fs::path(c.o.out_dir) / "nodes" / node;
  std::string inner = shell_quote(c.gpucal) + " run --suite " + shell_quote(c.o.suite) + " --out " + shell_quote(out.string()) +
                      " --backend " + shell_quote(c.o.backend) + " --no-plots";
  // Not given: all GPUs on a GPU backend, 2 on the host, and with --backend auto whatever the
  // node has (auto: a thread per GPU, or the host's threads on a CPU node).
  const std::string threads = !c.o.threads.empty()    ? c.o.threads
                              : c.o.backend == "host" ? "2"
                              : c.o.backend == "auto" ? "auto"
                                                      : "all";
  inner += " --threads " + shell_quote(threads);
  if (!c.o.bin_dir.empty()) inner += " --bin-dir " + shell_quote(c.o.bin_dir);
  // The node's health first (its verdict for the report; a failure does not stop the benches).
  if (c.o.health) {
    const fs::path health = fs::path(c.o.out_dir) / "nodes" / (node + ".health.json");
    const std::string check = shell_quote(c.gpucal) + " check --health --node " + shell_quote(node) + " --json " +
                              shell_quote(health.string()) + (c.o.health_args.empty() ? "" : " " + c.o.health_args);
    inner = "sh -c " + shell_quote(check + " >/dev/null 2>&1; exec " + inner);
  }
  return single_command(c.o.launcher, node, inner);
}

void node_phase(Context& c) {
  c.log << "node phase: " << c.o.suite << " on " << c.nodes.size() << " node(s) at once\n";
  fs::create_directories(fs::path(c.o.out_dir) / "nodes");
  std::vector<Step> steps;
  for (const auto& n : c.nodes)
    steps.push_back({node_phase_command(c, n), (fs::path(c.o.out_dir) / "nodes" / (n + ".log")).string(), c.o.node_timeout_s,
                     private_tmpdir_variable(c.o.launcher)});
  const auto results = run_steps(steps, c.o.stragglers);
  std::set<std::string> to_probe;
  for (std::size_t i = 0; i < c.nodes.size(); ++i) {
    const std::string& n = c.nodes[i];
    std::string detail;
    json& node = c.manifest.node(n);
    if (results[i].timed_out) {
      to_probe.insert(n);
      detail = "stopped after " + fmt_s(results[i].seconds) + " (timeout or straggler limit); kept what it measured";
      node["status"] = "timed out";
    } else if (results[i].status != 0 && !results[i].interrupted) {
      const std::string cause = log_cause(steps[i].log_path);
      detail = "gpucal run exited " + std::to_string(results[i].status) + (cause.empty() ? "" : ": " + cause) +
               " (nodes/" + n + ".log)";
      node["status"] = "failed";
      to_probe.insert(n);  // a node that cannot run a step is left out of the rest if it does not answer
    }
    node["detail"] = detail;
    node["node_phase_seconds"] = results[i].seconds;
    c.log << "  " << n << ": " << step_status(results[i]) << " (" << fmt_s(results[i].seconds) << ")\n";
    record(c, "node", 0, {n}, steps[i], results[i], "nodes/" + n, detail);
  }
  probe(c, to_probe, "node", 0);
}

std::string bench_command(const Context& c, const std::string& bench, const std::string& args, const fs::path& csv) {
  const FleetPlan& plan = find_fleet_plan(c.o.suite);
  char max_time[32];
  std::snprintf(max_time, sizeof max_time, "%g", plan.max_time_per_point_s);
  return shell_quote(bench) + " --backend " + shell_quote(c.o.backend) + " " + args + " --out " + shell_quote(csv.string()) +
         " --quiet --max-time-per-point " + max_time;
}

using PairList = std::vector<std::pair<std::string, std::string>>;

// Runs the steps of `pairs` at once, records them, probes the nodes of those that timed out;
// returns the steps that timed out while both their nodes still answer (worth a second try: an
// MPI wire-up that lost a race under load looks the same as a hung node until the probe).
std::vector<std::size_t> run_pair_steps(Context& c, const std::vector<Step>& steps, const PairList& pairs, int round,
                                        const std::string& what) {
  const auto results = run_steps(steps);
  std::set<std::string> timed_out;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& [a, b] = pairs[i];
    if (results[i].timed_out) timed_out.insert({a, b});
    record(c, "link", round, {a, b}, steps[i], results[i], "links/" + link_folder_name(a, b), what);
    c.log << "  round " << round << " " << a << "-" << b << " " << what << ": " << step_status(results[i]) << " ("
          << fmt_s(results[i].seconds) << ")\n";
  }
  probe(c, timed_out, "link", round);
  std::vector<std::size_t> retry;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (results[i].timed_out && !c.hung.count(pairs[i].first) && !c.hung.count(pairs[i].second)) retry.push_back(i);
  return retry;
}

// One round: the p2p step of every pair at once, then the collective step of every pair at once;
// a step that timed out on two answering nodes is tried once more.
void link_round(Context& c, const PairList& pairs, int round) {
  const FleetPlan& plan = find_fleet_plan(c.o.suite);
  // Each kind of step: its name (log file, manifest detail), the CSV it writes under the pair's
  // folder, and whether the ranks of each node must be told apart as nodes on one host.
  struct Kind {
    std::string bench, args, file, csv;
    int ranks_per_node;
    bool per_node_ranks;
  };
  std::vector<Kind> kinds{{c.bench_p2p, plan.link_p2p_args, "p2p", "p2p.csv", c.o.ranks_per_node, false},
                          {c.bench_collectives, plan.link_collective_args, "collectives", "collectives.csv", c.o.ranks_per_node, false}};
  if (c.rails > 0) kinds.push_back({c.bench_p2p, plan.link_rails_args, "rails", "rails/p2p.csv", c.rails, true});
  for (const auto& [bench, args, file, csv, ranks_per_node, per_node_ranks] : kinds) {
    std::vector<Step> steps;
    PairList run;
    for (const auto& [a, b] : pairs) {
      if (c.hung.count(a) || c.hung.count(b)) continue;
      const fs::path dir = fs::path(c.o.out_dir) / "links" / link_folder_name(a, b);
      fs::create_directories((dir / csv).parent_path());
      std::string inner = bench_command(c, bench, args, dir / csv);
      // The one-host rehearsal: each "node"'s ranks pretend to be a node of their own (the rails
      // pattern pairs two nodes' ranks; on one host they would all be one node).
      if (per_node_ranks && c.o.launcher.kind == Launcher::Kind::local)
        inner = "env GPUCAL_TEST_RANKS_PER_NODE=" + std::to_string(ranks_per_node) + " " + inner;
      steps.push_back({mpi_command(c.o.launcher, {a, b}, ranks_per_node, inner), (dir / (file + ".log")).string(),
                       c.o.link_timeout_s, private_tmpdir_variable(c.o.launcher)});
      run.push_back({a, b});
    }
    const std::vector<std::size_t> again = run_pair_steps(c, steps, run, round, file);
    if (stop_signal_received()) return;
    if (again.empty()) continue;
    std::vector<Step> retry_steps;
    PairList retry_pairs;
    for (std::size_t i : again) {
      retry_steps.push_back(steps[i]);
      retry_steps.back().log_path = steps[i].log_path.substr(0, steps[i].log_path.size() - 4) + ".retry.log";
      retry_pairs.push_back(run[i]);
    }
    run_pair_steps(c, retry_steps, retry_pairs, round, file + " (second try)");
    if (stop_signal_received()) return;
  }
}

std::vector<std::string> answering(const Context& c) {
  std::vector<std::string> alive;
  for (const auto& n : c.nodes)
    if (!c.hung.count(n)) alive.push_back(n);
  return alive;
}

// A round's pairs in batches of --pairs-at-once (0: all at once).
std::vector<PairList> batches_of(const PairList& pairs, int at_once) {
  std::vector<PairList> out;
  const std::size_t size = at_once > 0 ? static_cast<std::size_t>(at_once) : std::max<std::size_t>(1, pairs.size());
  for (std::size_t i = 0; i < pairs.size(); i += size)
    out.emplace_back(pairs.begin() + static_cast<long>(i), pairs.begin() + static_cast<long>(std::min(pairs.size(), i + size)));
  return out;
}

// --rails auto: the ranks the node phase ran on a GPU node (a thread per GPU), none on a CPU node.
int resolve_rails(const Context& c) {
  const int asked = parse_rails(c.o.rails);
  if (asked >= 0) return asked;
  for (const auto& n : c.nodes) {
    std::ifstream in(fs::path(c.o.out_dir) / "nodes" / n / "collectives.json");
    const json side = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!side.is_object() || !side.contains("device") || !side["device"].is_object() || !side.contains("world")) continue;
    if (side["device"].value("backend", "host") == "host") return 0;
    const json& world = side["world"];
    return world.is_object() && world.contains("ranks") && world["ranks"].is_number_integer() ? world["ranks"].get<int>() : 0;
  }
  return 0;
}

void link_phase(Context& c) {
  const std::vector<std::string> alive = answering(c);
  c.rails = resolve_rails(c);
  c.manifest.doc()["rails"] = c.rails;
  if (c.rails > 0) c.log << "link phase: " << c.rails << " rail(s) per pair (rank i of one node with rank i of the other)\n";
  SchedulePattern pattern = parse_schedule_pattern(c.o.pattern);
  pattern.seed = c.o.seed;
  const std::vector<Round> rounds = alive.size() >= 2 ? link_schedule(static_cast<int>(alive.size()), pattern) : std::vector<Round>{};
  json schedule = {{"pattern", to_string(pattern)}, {"seed", c.o.seed}, {"nodes", alive}, {"rounds", json::array()}};
  for (const Round& r : rounds) {
    json pairs = json::array();
    for (const NodePair& p : r.pairs) pairs.push_back({alive[static_cast<std::size_t>(p.a)], alive[static_cast<std::size_t>(p.b)]});
    schedule["rounds"].push_back(pairs);
  }
  c.manifest.doc()["schedule"] = schedule;
  c.manifest.save();
  c.log << "link phase: " << rounds.size() << " round(s) (" << to_string(pattern) << ") over " << alive.size() << " node(s)\n";
  for (std::size_t r = 0; r < rounds.size() && !stop_signal_received(); ++r) {
    PairList pairs;
    for (const NodePair& p : rounds[r].pairs) pairs.push_back({alive[static_cast<std::size_t>(p.a)], alive[static_cast<std::size_t>(p.b)]});
    for (const auto& batch : batches_of(pairs, c.o.pairs_at_once))
      if (!stop_signal_received()) link_round(c, batch, static_cast<int>(r) + 1);
  }
}

void fleet_phase(Context& c) {
  const std::vector<std::string> alive = answering(c);
  if (alive.size() < 2) {
    c.log << "fleet phase: skipped (" << alive.size() << " node(s) answer)\n";
    return;
  }
  const FleetPlan& plan = find_fleet_plan(c.o.suite);
  std::vector<Step> steps;
  std::vector<std::pair<std::string, std::vector<std::string>>> groups{{"fleet", alive}};
  if (c.o.group_size > 0)
    for (const auto& g : disjoint_groups(static_cast<int>(alive.size()), c.o.group_size)) {
      std::vector<std::string> members;
      for (int i : g) members.push_back(alive[static_cast<std::size_t>(i)]);
      groups.push_back({"g" + std::to_string(groups.size()), members});
    }
  json manifest_groups = json::array();
  for (const auto& [name, members] : groups) {
    const fs::path dir = name == "fleet" ? fs::path(c.o.out_dir) / "fleet" : fs::path(c.o.out_dir) / "fleet" / "groups" / name;
    fs::create_directories(dir);
    const std::string inner = bench_command(c, c.bench_collectives, plan.fleet_collective_args, dir / "collectives.csv");
    steps.push_back({mpi_command(c.o.launcher, members, c.o.ranks_per_node, inner), (dir / "collectives.log").string(), c.o.fleet_timeout_s,
                     private_tmpdir_variable(c.o.launcher)});
    if (name != "fleet") manifest_groups.push_back({{"name", name}, {"nodes", members}});
  }
  c.manifest.doc()["groups"] = manifest_groups;
  c.log << "fleet phase: the whole allocation (" << alive.size() << " node(s))"
        << (groups.size() > 1 ? " then " + std::to_string(groups.size() - 1) + " disjoint group(s) at once" : "") << "\n";
  // The whole allocation first, alone; then the groups together.
  for (std::size_t first = 0; first < steps.size() && !stop_signal_received(); first = first == 0 ? 1 : steps.size()) {
    const std::size_t last = first == 0 ? 1 : steps.size();
    const auto results = run_steps(std::vector<Step>(steps.begin() + static_cast<long>(first), steps.begin() + static_cast<long>(last)));
    for (std::size_t i = first; i < last; ++i) {
      record(c, "fleet", 0, groups[i].second, steps[i], results[i - first], groups[i].first, "");
      c.log << "  " << groups[i].first << ": " << step_status(results[i - first]) << " (" << fmt_s(results[i - first].seconds) << ")\n";
    }
  }
}

}  // namespace

namespace {

std::vector<std::string> parse_phases(const std::string& text) {
  std::vector<std::string> phases;
  std::istringstream in(text);
  std::string p;
  while (std::getline(in, p, ',')) {
    if (p != "node" && p != "link" && p != "fleet")
      throw std::invalid_argument("--phases: expected a list of node, link, fleet, got '" + p + "'");
    if (std::find(phases.begin(), phases.end(), p) != phases.end())
      throw std::invalid_argument("--phases: '" + p + "' is named twice (each phase runs once, in the order node, link, fleet)");
    phases.push_back(p);
  }
  if (phases.empty()) throw std::invalid_argument("--phases: expected a list of node, link, fleet");
  return phases;
}

// argv as the kernel has it (/proc/self/cmdline: NUL-separated).
std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> words;
  std::string word;
  while (std::getline(in, word, '\0')) words.push_back(word);
  return words;
}

std::string required_binary(const FleetRunOptions& o, const std::string& name) {
  calibration::RunOptions r;
  r.bin_dir = o.bin_dir;
  r.gpucal_path = o.gpucal_path;
  std::string tried;
  const std::string found = calibration::find_bench_binary(r, name, &tried);
  if (found.empty()) throw std::invalid_argument(name + " not found (looked for " + tried + "); give --bin-dir");
  return fs::absolute(found).string();
}

void validate(const FleetRunOptions& o) {
  calibration::find_suite(o.suite);
  find_fleet_plan(o.suite);
  parse_schedule_pattern(o.pattern);
  parse_phases(o.phases);
  if (o.out_dir.empty()) throw std::invalid_argument("OUT_DIR: expected a folder name");
  if (fs::exists(o.out_dir) && (!fs::is_directory(o.out_dir) || !fs::is_empty(o.out_dir)))
    throw std::invalid_argument("OUT_DIR: '" + o.out_dir + "' exists and is not an empty folder; a fleet run writes a new one");
  if (o.backend != "auto" && o.backend != "cuda" && o.backend != "hip" && o.backend != "host")
    throw std::invalid_argument("--backend: expected auto, cuda, hip or host, got '" + o.backend + "'");
  if (o.group_size == 1) throw std::invalid_argument("--groups: a group has at least 2 nodes, got 1 (0: no groups)");
  parse_rails(o.rails);
  calibration::check_threads_flag(o.threads);
}

}  // namespace

int run_fleet(const FleetRunOptions& options, std::ostream& log) {
  validate(options);
  log << std::unitbuf;  // progress shows in a batch job's output as it happens
  FleetRunOptions o = options;
  o.launcher.kind = parse_launcher_kind(o.launcher_kind);
  o.out_dir = fs::absolute(o.out_dir).string();
  const std::vector<std::string> phases = parse_phases(o.phases);
  Context c{o, log, Manifest((fs::path(o.out_dir) / "fleet.json").string()), discover_nodes(o.launcher, o.nodes), {}, "", "", ""};
  c.gpucal = fs::canonical("/proc/self/exe").string();
  c.bench_p2p = required_binary(o, "bench_p2p");
  c.bench_collectives = required_binary(o, "bench_collectives");
  if (c.nodes.size() < 2 && phases.size() > 1) log << "note: " << c.nodes.size() << " node: no pairs to measure\n";
  fs::create_directories(o.out_dir);
  const char* cluster = std::getenv("SLURM_CLUSTER_NAME");
  json& m = c.manifest.doc();
  m["generated_by"] = "gpucal fleet run";
  m["start_time"] = iso8601_now();
  m["cluster"] = !o.cluster.empty() ? o.cluster : (cluster ? cluster : "");
  m["suite"] = o.suite;
  m["backend"] = o.backend;
  m["launcher"] = to_string(o.launcher.kind);
  m["phases"] = phases;
  m["git_commit"] = GPUCAL_GIT_COMMIT;
  m["command_line"] = o.command_line.empty() ? own_command_line() : o.command_line;
  m["slurm_job_id"] = std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : "";
  for (const auto& n : c.nodes) c.manifest.node(n);
  c.manifest.save();
  log << "gpucal fleet run: " << c.nodes.size() << " node(s) via " << to_string(o.launcher.kind) << " -> " << o.out_dir << "\n";
  for (const auto& phase : phases) {
    if (stop_signal_received()) break;
    if (phase == "node") node_phase(c);
    else if (phase == "link") link_phase(c);
    else fleet_phase(c);
  }
  m["end_time"] = iso8601_now();
  if (const int sig = stop_signal_received()) m["stopped_by_signal"] = sig;
  c.manifest.save();
  int not_ok = 0;
  for (const auto& n : m["nodes"]) not_ok += n.value("status", "ok") != "ok";
  log << "fleet run done: " << c.nodes.size() - static_cast<std::size_t>(not_ok) << " of " << c.nodes.size()
      << " node(s) ok; " << o.out_dir << "/fleet.json\n";
  if (const int sig = stop_signal_received()) return 128 + sig;
  return not_ok > 0 ? 1 : 0;
}

}  // namespace gpucal::fleet
