#include "app/fleet/commands.h"

#include <iostream>
#include <optional>
#include <memory>

#include "app/check/check_command.h"
#include "app/check/health_command.h"
#include "app/common/command.h"
#include "app/common/output_guard.h"
#include "app/fleet/baseline.h"
#include "app/fleet/fleet_run.h"
#include "app/fleet/report_command.h"
#include "app/history/history_commands.h"
#include "core/driver/flag_checks.h"

namespace gpucal::fleet {

namespace {

struct State {
  FleetRunOptions run;
  bool run_report = true;
  ReportOptions report;
  BaselineOptions baseline;
  ScheduleOptions schedule;
  check::CheckOptions check_options;
  check::HealthOptions health;
  bool check_health = false;
  std::string history_path, history_cluster;
  std::vector<std::string> import_paths;
  history::ShowOptions show;
  history::RegressionCommand regressions;
  CLI::App *fleet_run = nullptr, *fleet_report = nullptr, *fleet_baseline = nullptr, *fleet_schedule = nullptr;
  CLI::App *check_cmd = nullptr, *history_import = nullptr, *history_show = nullptr, *history_regressions = nullptr;
};

void add_drain_flags(CLI::App& cmd, ReportOptions& r) {
  cmd.add_flag("--drain", r.drain,
               "drain every suspect node in Slurm, the finding as its reason (scontrol update NodeName=N State=DRAIN); "
               "links are not drained");
  cmd.add_option("--scontrol", r.scontrol, "the program --drain runs")->capture_default_str();
}

void add_diagnosis_flags(CLI::App& cmd, DiagnosisOptions& d) {
  cmd.add_option("--expect", d.expect, "auto (each node's SKU from expectations/) | none | an expectations file")
      ->capture_default_str()->type_name("auto|none|FILE");
  add_number(cmd, "--z", d.z_threshold,
             "robust z beyond which a figure is an outlier, at least: raised with the number of figures ranked so that noise "
             "names 0.05 healthy figures a report in expectation (4.3 for 7,000 figures)",
             {.min = 0, .max = 1e6})
      ->capture_default_str();
  add_number(cmd, "--min-deviation", d.min_deviation,
             "an outlier is also worse than the median by the factor 1 - this", {.min = 0, .max = 0.99})
      ->capture_default_str();
  add_number(cmd, "--gross-factor", d.gross_factor,
             "worse than the median by this factor: an outlier whatever the robust z (0: off)", {.min = 0, .max = 1e6})
      ->capture_default_str();
  cmd.add_option("--statistic", d.statistic,
                 "median (each figure at its median time) | best (its fastest sample: for oversubscribed test clusters)")
      ->capture_default_str()
      ->check(CLI::IsMember({"median", "best"}));
  cmd.add_option("--ignore-metrics", d.ignore_metrics,
                 "metrics left out of the ranking, e.g. latencies on an oversubscribed test cluster (comma list)")
      ->delimiter(',');
}

void add_fleet_run(CLI::App& fleet, State& s) {
  auto* c = s.fleet_run = fleet.add_subcommand("run", "inside an allocation: node, link and fleet phases into OUT_DIR, then the report");
  FleetRunOptions& o = s.run;
  c->add_option("OUT_DIR", o.out_dir, "fleet folder to create")->required();
  c->add_option("--suite", o.suite, "fleet (GPU nodes) | fleet-smoke (CPU nodes, CI)")->capture_default_str();
  c->add_option("--backend", o.backend, "auto | cuda | hip | host")->capture_default_str();
  c->add_option("--launcher", o.launcher_kind, "auto | slurm | mpirun | local")->capture_default_str();
  c->add_option("--nodes", o.nodes, "node names, a,b,c (default: the allocation's, or the host file's)");
  c->add_option("--hostfile", o.launcher.hostfile, "mpirun: one host per line")->type_name("FILE");
  c->add_option("--srun", o.launcher.srun, "srun and options added to every step")->capture_default_str();
  c->add_option("--srun-mpi", o.launcher.srun_mpi, "srun --mpi= for MPI steps")->capture_default_str();
  c->add_option("--mpirun", o.launcher.mpirun, "mpirun and options (mpirun and local launchers)")->capture_default_str();
  c->add_option("--threads", o.threads,
                "node phase: gpucal run --threads (default: all with --backend cuda or hip, 2 with host, auto with auto: "
                "a thread per GPU, or 4 on a node without one)");
  add_number(*c, "--ranks-per-node", o.ranks_per_node, "ranks per node: in the link and fleet phases", {.min = 1, .max = 1024})
      ->capture_default_str();
  c->add_option("--rails", o.rails,
                "link phase: also rank i of one node with rank i of the other for i < N, both ways, one rail at a time "
                "(GPU i and its NIC), into links/<a>--<b>/rails/; a node whose rail is slow with every peer is named "
                "with the rail. auto: the GPUs per node on GPU nodes, none on CPU nodes; 0: none")
      ->capture_default_str();
  c->add_option("--pattern", o.pattern, "link phase: round-robin | ring | random:K")->capture_default_str();
  add_number(*c, "--seed", o.seed, "random:K pattern's seed")->capture_default_str();
  add_number(*c, "--pairs-at-once", o.pairs_at_once,
             "link phase: measure a round's pairs in batches of K (SuperBench's k-batch; 0: the whole round at once)",
             {.min = 0, .max = 1 << 20})
      ->capture_default_str();
  add_number(*c, "--groups", o.group_size, "fleet phase: also disjoint groups of G nodes, measured at once", {.min = 0, .max = 1 << 20});
  c->add_option("--phases", o.phases, "which phases: node,link,fleet")->capture_default_str();
  add_number(*c, "--node-timeout", o.node_timeout_s, "seconds", {.min = 1, .max = 1e7})->capture_default_str();
  add_number(*c, "--link-timeout", o.link_timeout_s, "seconds per link step", {.min = 1, .max = 1e7})->capture_default_str();
  add_number(*c, "--fleet-timeout", o.fleet_timeout_s, "seconds", {.min = 1, .max = 1e7})->capture_default_str();
  add_number(*c, "--probe-timeout", o.probe_timeout_s, "seconds a node has to answer a probe", {.min = 1, .max = 1e6})
      ->capture_default_str();
  add_number(*c, "--straggler-factor", o.stragglers.factor,
             "node phase: stop a node still running after this many times the median node's time", {.min = 1, .max = 1e6})
      ->capture_default_str();
  add_number(*c, "--straggler-min", o.stragglers.min_s, "node phase: ... but never before this many seconds", {.min = 0, .max = 1e7})
      ->capture_default_str();
  c->add_option("--bin-dir", o.bin_dir, "where gpucal run and the fleet find the bench_* binaries")->type_name("DIR");
  c->add_flag("!--no-health", o.health,
              "node phase: skip gpucal check --health (by default each node's verdict goes to nodes/<name>.health.json and a "
              "failure names the node in the report)");
  c->add_option("--health-args", o.health_args, "node phase: more arguments for gpucal check --health (say --sysfs DIR)");
  c->add_option("--cluster", o.cluster, "cluster name in fleet.json and the history (default: $SLURM_CLUSTER_NAME)");
  c->add_flag("!--no-report", s.run_report, "do not run gpucal fleet report at the end");
  c->add_option("--history", s.report.history, "record the run in this history file (SQLite)")->type_name("FILE");
  add_diagnosis_flags(*c, s.report.diagnosis);
  add_drain_flags(*c, s.report);
}

void add_fleet_others(CLI::App& fleet, State& s) {
  auto* r = s.fleet_report = fleet.add_subcommand("report", "rank nodes and links; name the suspects (exit 1 when there are)");
  r->add_option("FLEET_DIR", s.report.fleet_dir, "a gpucal fleet run folder")->required();
  r->add_option("--markdown", s.report.markdown, "the report as markdown (default: FLEET_DIR/report.md)")->type_name("FILE");
  r->add_option("--html", s.report.html, "the report as an HTML page with plots (default: FLEET_DIR/report.html)")->type_name("FILE");
  r->add_option("--json", s.report.json, "the report as JSON (default: FLEET_DIR/report.json)")->type_name("FILE");
  r->add_option("--junit", s.report.junit, "the report as JUnit XML (default: FLEET_DIR/report.junit.xml)")->type_name("FILE");
  r->add_option("--prometheus", s.report.prometheus, "also write node_exporter's textfile collector gauges (.prom)")->type_name("FILE");
  r->add_option("--history", s.report.history, "record the run in this history file (SQLite)")->type_name("FILE");
  r->add_option("--cluster", s.report.cluster, "cluster name for the history (default: fleet.json's)");
  add_diagnosis_flags(*r, s.report.diagnosis);
  add_drain_flags(*r, s.report);

  auto* b = s.fleet_baseline = fleet.add_subcommand("baseline", "write an expectations file from N nodes' results");
  b->add_option("INPUT", s.baseline.inputs, "fleet folders or results folders")->required();
  b->add_option("-o,--output", s.baseline.out, "expectations file to write")->required()->type_name("FILE");
  b->add_option("--sku", s.baseline.sku, "the SKU's name")->required();
  b->add_option("--name", s.baseline.name, "a longer name (default: the device name)");
  b->add_option("--backend", s.baseline.backend, "match.backend (default: the inputs')");
  b->add_option("--device-regex", s.baseline.device_regex, "match.device_regex (default: the device name exactly)");
  add_number(*b, "--spread-k", s.baseline.spread_k, "floor = median - max(k x robust sigma, margin x median)", {.min = 0, .max = 100})
      ->capture_default_str();
  add_number(*b, "--min-margin", s.baseline.min_margin, "see --spread-k", {.min = 0, .max = 0.99})->capture_default_str();
  add_number(*b, "--min-nodes", s.baseline.min_nodes, "nodes a metric needs", {.min = 1, .max = 1 << 20})->capture_default_str();
  b->add_option("--statistic", s.baseline.statistic,
                "median (each figure at its median time) | best (its fastest sample), as the fleet report that uses the file reads")
      ->capture_default_str()
      ->check(CLI::IsMember({"median", "best"}));

  auto* sc = s.fleet_schedule = fleet.add_subcommand("schedule", "print the link phase's rounds for N nodes");
  sc->add_option("--nodes", s.schedule.nodes, "counts (4,8,16,64) or node names (a,b,c)")->required();
  sc->add_option("--pattern", s.schedule.pattern, "round-robin | ring | random:K")->capture_default_str();
  add_number(*sc, "--seed", s.schedule.seed, "random:K pattern's seed")->capture_default_str();
  add_number(*sc, "--groups", s.schedule.group_size, "also print disjoint groups of G nodes", {.min = 0, .max = 1 << 20});
  sc->add_flag("--summary", s.schedule.summary, "the table only");
}

void add_check(CLI::App& app, State& s) {
  auto* c = s.check_cmd = app.add_subcommand("check", "a results folder against its SKU's expectations (exit 1 on a miss)");
  c->add_option("RESULTS_DIR", s.check_options.results_dir, "results folder (none with --health)");
  c->add_option("--expect", s.check_options.expect, "auto (the SKU from the sidecars' device) | an expectations file (none is refused: check needs expectations)")->capture_default_str()->type_name("auto|FILE");
  c->add_option("--junit", s.check_options.junit, "write JUnit XML")->type_name("FILE");
  c->add_option("--json", s.check_options.json, "write the table as JSON")->type_name("FILE");
  c->add_option("--markdown", s.check_options.markdown, "write the table as Markdown")->type_name("FILE");
  c->add_option("--prometheus", s.check_options.prometheus, "write node_exporter's textfile collector gauges (.prom)")->type_name("FILE");
  c->add_flag("--health", s.check_health,
              "this node's health instead of a results folder: PCIe links, memory ECC, CPU throttling (sysfs), and per GPU "
              "ECC, row remaps, PCIe, clock slowdowns, temperature, NVLink (NVML), Xid events (kernel log), and the PCIe and "
              "NVLink the GPU's SKU should show (expectations/); exit 1 on a failure or when nothing could be checked");
  c->add_option("--sysfs", s.health.sysfs, "--health: where to read sysfs")->capture_default_str()->type_name("DIR");
  c->add_option("--kernel-log", s.health.kernel_log,
                "--health: read NVIDIA Xid events from this kernel log text (dmesg, journalctl -k: a previous boot's too) "
                "instead of the kernel's ring buffer")
      ->type_name("FILE");
  c->add_option("--health-from", s.health.from, "--health: judge a recorded readings file (the JSON --health --json wrote) instead of this node")
      ->type_name("FILE");
  c->add_option("--node", s.health.node, "--health: the node's name (default: SLURMD_NODENAME, else the short host name)");
  c->add_flag("--drain", s.health.drain, "--health: on a failure, drain this node in Slurm with the failure as its reason");
  c->add_option("--scontrol", s.health.scontrol, "the program --drain runs")->capture_default_str();
}

int run_check_or_health(State& s) {
  check::CheckOptions& c = s.check_options;
  if (!s.check_health) {
    for (const char* flag : {"--sysfs", "--kernel-log", "--health-from", "--node", "--drain", "--scontrol"})
      if (s.check_cmd->get_option(flag)->count() > 0)
        throw std::invalid_argument(std::string(flag) + " goes with --health (this node's health checks)");
    if (c.results_dir.empty()) throw std::invalid_argument("check: give a RESULTS_DIR to judge, or --health for this node's health");
    return check::run_check(c, std::cout);
  }
  if (!c.results_dir.empty())
    throw std::invalid_argument("check --health judges this node, not " + c.results_dir +
                                ": run gpucal check twice, once with the folder and once with --health");
  for (const char* flag : {"--expect", "--markdown"})
    if (s.check_cmd->get_option(flag)->count() > 0) throw std::invalid_argument(std::string(flag) + " does not go with --health");
  s.health.json = c.json;
  s.health.junit = c.junit;
  s.health.prometheus = c.prometheus;
  calibration::refuse_outputs_over_inputs({{"--junit", c.junit}, {"--json", c.json}, {"--prometheus", c.prometheus}},
                                          {.files = {s.health.from}, .folders = {}});
  return check::run_health(s.health, std::cout);
}

CLI::App* add_history(CLI::App& app, State& s) {
  auto* h = app.add_subcommand("history", "record runs in a history file, show trends, flag regressions");
  h->require_subcommand(1);
  auto* i = s.history_import = h->add_subcommand("import", "record fleet folders or results folders");
  i->add_option("PATH", s.import_paths, "fleet folders or results folders")->required();
  i->add_option("--history", s.history_path, "history file (SQLite; created when absent)")->required()->type_name("FILE");
  i->add_option("--cluster", s.history_cluster, "cluster name (default: fleet.json's)");
  add_diagnosis_flags(*i, s.report.diagnosis);
  auto* sh = s.history_show = h->add_subcommand("show", "each node's figures per metric, oldest to newest");
  sh->add_option("--history", s.show.history, "history file")->required()->type_name("FILE");
  sh->add_option("--metric", s.show.metric, "only this metric");
  sh->add_option("--node", s.show.node, "only this node (or pair a--b)");
  add_number(*sh, "--last", s.show.last, "nights to show (runs, and nights without one)", {.min = 1, .max = 1 << 20})->capture_default_str();
  sh->add_option("--html", s.show.html, "also write the trends as an HTML page with plots")->type_name("FILE");
  auto* rg = s.history_regressions = h->add_subcommand("regressions", "latest figures against their rolling baseline (exit 1 on one)");
  history::RegressionCommand& r = s.regressions;
  rg->add_option("--history", r.history, "history file")->required()->type_name("FILE");
  rg->add_option("--metric", r.metric, "only this metric");
  rg->add_option("--node", r.node, "only this node");
  add_number(*rg, "--window", r.options.window, "previous runs in the baseline", {.min = 1, .max = 1 << 20})->capture_default_str();
  rg->add_option("--baseline", r.baseline,
                 "an expectations file (fleet baseline's over trusted nights): each node's latest figure of a metric it has a "
                 "floor for is judged against that floor, from the first night, instead of its earlier nights")
      ->type_name("FILE");
  rg->add_option("--ignore-metrics", r.ignore_metrics,
                 "metrics left out of the ranking, e.g. latencies on an oversubscribed test cluster (comma list)")
      ->delimiter(',');
  rg->add_option("--k", r.k_text,
                 "threshold = max(min change, k x run-to-run spread); auto: k keeps the expected healthy series flagged a "
                 "night at 0.05 across the series judged (3.2 for 35 series, 4.6 for 10,000; at least 3)")
      ->capture_default_str()
      ->type_name("auto|FLOAT");
  add_number(*rg, "--min-change", r.options.min_change, "smallest relative change that counts", {.min = 0, .max = 10})->capture_default_str();
  add_number(*rg, "--min-history", r.options.min_history,
             "previous runs needed for a verdict (fewer than --window: the spread is the fleet's change that night)",
             {.min = 1, .max = 1 << 20})
      ->capture_default_str();
  rg->add_option("--junit", r.junit, "write JUnit XML")->type_name("FILE");
  rg->add_option("--json", r.json, "write the trends as JSON")->type_name("FILE");
  rg->add_option("--prometheus", r.prometheus, "write node_exporter's textfile collector gauges (.prom)")->type_name("FILE");
  return h;
}

std::optional<int> run_parsed(State& s) {
  // Each Command adds one verb: the other verbs' subcommands are null.
  auto parsed = [](const CLI::App* sub) { return sub != nullptr && sub->parsed(); };
  if (parsed(s.fleet_run)) {
    // The report's flags are checked before the first step: a bad one costs no night.
    s.report.fleet_dir = s.run.out_dir;
    s.report.cluster = s.run.cluster;
    if (s.run_report) validate_report_options(s.report);
    const int rc = run_fleet(s.run, std::cout);
    if (!s.run_report || rc >= 128) return rc;
    s.report.fleet_dir = s.run.out_dir;
    s.report.cluster = s.run.cluster;
    const int report_rc = run_report(s.report, std::cout);
    return std::max(rc, report_rc);
  }
  if (parsed(s.fleet_report)) return run_report(s.report, std::cout);
  if (parsed(s.fleet_baseline)) return run_baseline(s.baseline, std::cout);
  if (parsed(s.fleet_schedule)) return run_schedule(s.schedule, std::cout);
  if (parsed(s.check_cmd)) return run_check_or_health(s);
  if (parsed(s.history_import)) return history::run_import(s.history_path, s.import_paths, s.history_cluster, s.report.diagnosis, std::cout);
  if (parsed(s.history_show)) return history::run_show(s.show, std::cout);
  if (parsed(s.history_regressions)) return history::run_regressions(s.regressions, std::cout);
  return std::nullopt;
}

// One of the three verbs: its subcommand and flags on the CLI, then the parsed one run.
class OperatorCommand : public calibration::Command {
 public:
  OperatorCommand(std::string verb, const std::string& argv0) : verb_(std::move(verb)) { s_.run.gpucal_path = argv0; }
  CLI::App* add_to(CLI::App& app) override {
    if (verb_ == "check") {
      add_check(app, s_);
      s_.check_cmd->footer(calibration::examples_footer({
          {"gpucal check results/smoke --expect auto", "one node's results against its SKU's floors (exit 1 on a miss)"},
          {"gpucal check results/node01 --expect expectations/h100_sxm.json --junit check.xml", "against a given file, JUnit for CI"},
          {"gpucal check results/node01 --prometheus /var/lib/node_exporter/gpucal_check.prom", "the verdicts as Prometheus gauges"},
          {"gpucal check --health --drain", "this node's health; drain it in Slurm on a failure (HealthCheckProgram, prolog)"},
          {"gpucal check --health --health-from node07-health.json", "judge readings recorded on another node"},
      }));
      return s_.check_cmd;
    }
    if (verb_ == "history") {
      CLI::App* h = add_history(app, s_);
      h->footer(calibration::examples_footer({
          {"gpucal history import fleet-2026-11-25/ --history h.sqlite", "record a fleet run"},
          {"gpucal history regressions --history h.sqlite", "latest figures against their rolling baseline (exit 1 on one)"},
          {"gpucal history show --history h.sqlite --metric hbm_copy_gbps --html trends.html", "a metric's trend per node"},
      }));
      // A nested verb inherits its parent's footer as it was when the verb was added (the top
      // level's examples): each gets its own.
      s_.history_import->footer(calibration::examples_footer({
          {"gpucal history import fleet-2026-11-25/ --history h.sqlite", "record a fleet run (a node's results folder too)"},
          {"gpucal history import fleet-*/ --history h.sqlite --cluster west", "several nights at once, under a cluster name"},
      }));
      s_.history_show->footer(calibration::examples_footer({
          {"gpucal history show --history h.sqlite", "every metric's figures per node, oldest to newest"},
          {"gpucal history show --history h.sqlite --metric hbm_copy_gbps --html trends.html", "a metric's trend per node"},
      }));
      s_.history_regressions->footer(calibration::examples_footer({
          {"gpucal history regressions --history h.sqlite", "latest figures against their rolling baseline (exit 1 on one)"},
          {"gpucal history regressions --history h.sqlite --junit regressions.xml", "the same as JUnit for CI"},
          {"gpucal history regressions --history h.sqlite --baseline expectations/my_sku.json",
           "from the first night: node figures against the floors of fleet baseline's file"},
          {"gpucal history regressions --history h.sqlite --prometheus /var/lib/node_exporter/gpucal_regressions.prom",
           "gpucal_regression gauges for node_exporter's textfile collector"},
      }));
      return h;
    }
    auto* fleet = app.add_subcommand("fleet", "measure a cluster's nodes and links and name the bad ones");
    fleet->require_subcommand(1);
    add_fleet_run(*fleet, s_);
    add_fleet_others(*fleet, s_);
    fleet->footer(calibration::examples_footer({
        {"sbatch -N 16 --wrap 'gpucal fleet run fleet-$(date +%F) --history h.sqlite'",
         "every node, every pair of nodes in N-1 rounds, the whole allocation; then the report"},
        {"gpucal fleet report fleet-2026-11-25/", "the suspect nodes and links again, with other thresholds"},
        {"gpucal fleet schedule --nodes 4,8,16,64 --summary", "how many link rounds a fleet of each size takes"},
    }));
    s_.fleet_run->footer(calibration::examples_footer({
        {"sbatch -N 16 --wrap 'gpucal fleet run fleet-$(date +%F) --history h.sqlite'",
         "every node, every pair of nodes in N-1 rounds, the whole allocation; then the report"},
        {"gpucal fleet run rehearsal/ --launcher local --nodes a,b,c,d --backend host --pattern ring",
         "the phases on this machine, four names for it"},
    }));
    s_.fleet_report->footer(calibration::examples_footer({
        {"gpucal fleet report fleet-2026-11-25/", "the suspect nodes and links again (exit 1 when there are)"},
        {"gpucal fleet report fleet-2026-11-25/ --z 4 --junit fleet.xml", "another threshold, JUnit for CI"},
        {"gpucal fleet report fleet-2026-11-25/ --prometheus /var/lib/node_exporter/gpucal_fleet.prom",
         "gpucal_node_ok per node for node_exporter's textfile collector"},
    }));
    s_.fleet_baseline->footer(calibration::examples_footer({
        {"gpucal fleet baseline fleet-2026-11-25/ fleet-2026-11-26/ --sku h100_sxm -o h100_site.json",
         "expectations from healthy nights, for --expect"},
        {"gpucal fleet baseline fleet-2026-11-*/ --sku h100_sxm --spread-k 3 --min-nodes 8 -o h100_site.json",
         "tighter floors (3 robust sigmas) from a month of nights, a metric kept only where 8 nodes measured it"},
        {"gpucal fleet baseline fleet-2026-11-25/ --sku host_ci --statistic best -o host_ci.json",
         "from fastest samples, for fleet report --statistic best"},
    }));
    s_.fleet_schedule->footer(calibration::examples_footer({
        {"gpucal fleet schedule --nodes 4,8,16,64 --summary", "how many link rounds a fleet of each size takes"},
        {"gpucal fleet schedule --nodes a,b,c,d,e --pattern ring", "the rounds themselves, with node names"},
    }));
    return fleet;
  }
  int run() override { return run_parsed(s_).value_or(2); }

 private:
  std::string verb_;
  State s_;
};

}  // namespace

std::unique_ptr<calibration::Command> make_operator_command(const std::string& verb, const std::string& argv0) {
  return std::make_unique<OperatorCommand>(verb, argv0);
}

}  // namespace gpucal::fleet
