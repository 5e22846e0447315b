// gpucal: calibration front end. Subcommands:
//   gpucal run --suite smoke|calibration|nightly [--out DIR] [--backend auto|cuda|hip|host]
//              [--bin-dir DIR] [--mpirun "mpirun -np 4 --oversubscribe" | --threads N|all] [--no-plots]
//   gpucal fit RESULTS_DIR [-o calibration.json] [--report]
//   gpucal export RESULTS_DIR|calibration.json --to calculon|astrasim|nersc|vtrain|all [-o DIR]
//                [--set KEY=VALUE ...]   (a refused export exits 2 after writing the others)
//   gpucal compare BASELINE_DIR CURRENT_DIR [--threshold 0.05] [--markdown F] [--junit F] [--json F]
//   gpucal import LOG... --out DIR [--ranks-per-node N] [--nranks N] [--device NAME] [--collective NAME]
//   gpucal predict-comm RESULTS_DIR|calibration.json --collective C --nranks N
//                      (--nnodes M | --ranks-per-node K) --size S (axis syntax: 256M, 1M,4M, 8:1G:x2)
//                      [--dtype T] [--json]
//   gpucal predict RESULTS_DIR --model NAME|--model-config F [layout flags as the benches'] [--overlap none|tp|dp|tp,dp]
//                  [--schedule 1f1b|interleaved --virtual-stages V] [--ranks-per-node N] [--peak-tflops P]
//                  [--sweep tp=1,2,4 pp=1,2 ...] [--out predict.json] [--allow-missing]
// Exit codes: 0 ok; 1 regression (compare), a failed bench or a suite that measured nothing
// (run), or a failed write (disk full: the previous file stays); 2 bad input.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "app/common/calibration_json.h"
#include "app/fit/comm_model.h"
#include "app/predict/predict_command.h"
#include "core/driver/sweep.h"
#include "app/compare/compare.h"
#include "app/compare/compare_report.h"
#include "app/export/export_common.h"
#include "core/output/file_io.h"
#include "core/driver/flag_checks.h"
#include "app/fit/fit_report.h"
#include "app/import/import_writer.h"
#include "app/common/output_guard.h"
#include "app/common/results_dir.h"
#include "app/fleet/commands.h"
#include "app/run/run_suite.h"

namespace {

using namespace gpucal::calibration;
namespace fs = std::filesystem;

constexpr int kExitBadInput = 2;
constexpr int kExitFailure = 1;

// Torn last lines dropped by the reader are worth a line each on stderr.
ResultsDir load_results(const std::string& dir) {
  ResultsDir results = load_results_dir(dir);
  for (const auto& w : results.warnings) gpucal::write_stderr_line("gpucal: warning: " + w);
  return results;
}

int cmd_fit(const std::string& results_dir, std::string out_path, bool report) {
  refuse_output_over_inputs("-o", out_path, {results_dir}, /*reads_calibration_json=*/false);
  if (out_path.empty()) out_path = (fs::path(results_dir) / "calibration.json").string();
  const nlohmann::json calibration = build_calibration(load_results(results_dir));
  write_json_file(calibration, out_path);
  std::cout << "wrote " << out_path << " (calibration_schema_version " << kCalibrationSchemaVersion << ", "
            << calibration["communication"]["collectives"].size() << " collective group(s), "
            << calibration["communication"]["p2p"].size() << " p2p group(s))\n";
  for (const auto& m : calibration["missing"]) std::cout << "  missing: " << m.get<std::string>() << "\n";
  for (const auto& w : calibration["warnings"]) std::cout << "  warning: " << w.get<std::string>() << "\n";
  if (report) std::cout << format_fit_report(calibration);
  return 0;
}

int cmd_export(const std::string& source, const std::string& target, std::string out_dir,
               const std::vector<std::string>& set_items) {
  const ExportSettings settings = ExportSettings::parse(set_items);  // usage errors before any reading
  nlohmann::json calibration;
  if (fs::is_regular_file(source)) {
    calibration = read_calibration_file(source);
    if (out_dir.empty()) out_dir = (fs::path(source).parent_path() / "export").string();
  } else {
    calibration = build_calibration(load_results(source));
    if (out_dir.empty()) out_dir = (fs::path(source) / "export").string();
  }
  int status = 0;
  for (const ExportReport& r : export_to(calibration, target, out_dir, settings)) {
    std::cout << format_export_report(r, /*with_refusals=*/false);
    for (const auto& line : r.refused) std::cerr << "gpucal: export " << r.consumer << " refused: " << line << "\n";
    if (!r.ok()) status = kExitBadInput;
  }
  return status;
}

int cmd_compare(const std::string& baseline, const std::string& current, double threshold,
                const std::string& markdown, const std::string& junit, const std::string& json_path) {
  for (const auto& [flag, path] : {std::pair{"--markdown", markdown}, {"--junit", junit}, {"--json", json_path}})
    refuse_output_over_inputs(flag, path, {baseline, current}, /*reads_calibration_json=*/false);
  refuse_shared_outputs({{"--markdown", markdown}, {"--junit", junit}, {"--json", json_path}});
  CompareOptions options;
  options.threshold = threshold;
  const ResultsDir baseline_results = load_results(baseline);  // baseline errors reported first
  const ResultsDir current_results = load_results(current);
  const CompareResult result = compare_runs(baseline_results, current_results, options);
  print_compare_console(result, std::cout);
  if (!markdown.empty()) write_compare_markdown(result, markdown);
  if (!junit.empty()) write_compare_junit(result, junit);
  if (!json_path.empty()) write_json_file(compare_to_json(result), json_path);
  return result.failures() > 0 ? 1 : 0;
}

int cmd_import(const std::vector<std::string>& logs, const std::string& out_dir, const ImportOptions& options,
               const std::vector<std::string>& argv) {
  // The same log twice would import every row twice under one point key.
  std::set<fs::path> seen;
  for (const auto& log : logs)
    if (!seen.insert(fs::weakly_canonical(fs::absolute(log))).second)
      throw std::invalid_argument("LOG: '" + log + "' is given twice");
  // Every log is read before anything is written: one bad log leaves no folder behind.
  std::vector<ImportedRun> runs;
  for (const auto& log : logs)
    for (auto& run : import_log(log, options)) runs.push_back(std::move(run));
  const ImportSummary summary = write_imported_results(runs, out_dir, argv);
  for (const auto& m : summary.messages) std::cout << m << "\n";
  std::cout << "wrote " << out_dir << ": " << summary.collective_rows << " collectives row(s), "
            << summary.p2p_rows << " p2p row(s)\n";
  return 0;
}

nlohmann::json load_calibration(const std::string& source) {
  if (fs::is_regular_file(source)) return read_calibration_file(source);
  const fs::path existing = fs::path(source) / "calibration.json";
  if (fs::is_regular_file(existing)) return read_calibration_file(existing.string());
  return build_calibration(load_results(source));
}

int cmd_predict_comm(const std::string& source, CommQuery query, const std::string& sizes, bool as_json) {
  const CommModel model(load_calibration(source));
  nlohmann::json all = nlohmann::json::array();
  for (const int64_t size : gpucal::parse_axis(sizes, "size")) {
    query.size_bytes = static_cast<double>(size);
    const CommPrediction p = model.predict(query);
    if (as_json) {
      all.push_back({{"collective", query.collective},
                     {"nranks", query.nranks},
                     {"nnodes", query.nnodes},
                     {"ranks_per_node", query.ranks_per_node},
                     {"size_bytes", query.size_bytes},
                     {"time_s", p.time_s},
                     {"algbw_gbps", p.algbw_gbps},
                     {"busbw_gbps", p.busbw_gbps},
                     {"provenance", to_string(p.provenance)},
                     {"form", p.form},
                     {"groups", p.groups},
                     {"method", p.method}});
      continue;
    }
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s %lld ranks, %.0f B: %.6g us  algbw %.4g GB/s  busbw %.4g GB/s  [%s]\n",
                  query.collective.c_str(), static_cast<long long>(query.nranks), query.size_bytes, p.time_us,
                  p.algbw_gbps, p.busbw_gbps, to_string(p.provenance).c_str());
    std::cout << line << "  how: " << p.method << "\n  from:";
    for (const auto& g : p.groups) std::cout << " " << g;
    std::cout << " (form " << p.form << ")\n";
  }
  if (as_json) std::cout << all.dump(2) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpucal: run benchmark suites, fit calibration models, compare runs, export for modelers"};
  app.require_subcommand(1);
  // CLI11 would call an unknown word "not expected" or ask for a subcommand: name it instead.
  std::vector<std::string> subcommands{"run", "fit", "export", "compare", "import", "predict-comm", "predict"};
  for (const auto& name : gpucal::fleet::command_names()) subcommands.push_back(name);
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(subcommands.begin(), subcommands.end(), std::string(argv[1])) == subcommands.end()) {
    std::string expected;
    for (const auto& c : subcommands) expected += (expected.empty() ? "" : ", ") + c;
    gpucal::write_stderr_line(std::string("gpucal: error: unknown subcommand '") + argv[1] + "' (expected " +
                              expected + ")");
    return kExitBadInput;
  }

  RunOptions run;
  run.gpucal_path = argv[0];
  bool no_plots = false;
  auto* run_cmd =
      app.add_subcommand("run", "run a suite of benches into one results folder, then fit, export, plot");
  run_cmd->add_option("--suite", run.suite, "smoke | calibration | nightly")->capture_default_str();
  run_cmd->add_option("--out", run.out_dir, "results folder to create")->capture_default_str();
  run_cmd->add_option("--backend", run.backend, "auto | cuda | hip | host")->capture_default_str();
  run_cmd->add_option("--bin-dir", run.bin_dir, "where the bench_* binaries are (default: beside gpucal)");
  run_cmd->add_option("--mpirun", run.mpirun,
                      "launcher for collectives/p2p, e.g. \"mpirun -np 4 --oversubscribe\"");
  run_cmd
      ->add_option("--threads", run.threads,
                   "or: run collectives/p2p as one process with N rank threads (all: one per GPU)")
      ->excludes(run_cmd->get_option("--mpirun"));
  run_cmd->add_flag("--no-plots", no_plots, "do not call the plot scripts");

  std::string fit_dir, fit_out;
  auto* fit_cmd = app.add_subcommand("fit", "fit models to a results folder and write calibration.json");
  fit_cmd->add_option("RESULTS_DIR", fit_dir, "results folder")->required();
  fit_cmd->add_option("-o,--output", fit_out, "output file (default RESULTS_DIR/calibration.json)");
  bool fit_report = false;
  fit_cmd->add_flag("--report", fit_report,
                    "print each communication group's chosen form and cross-validated errors against log-log "
                    "interpolation");

  std::string export_src, export_to_target, export_out;
  std::vector<std::string> export_set;
  auto* export_cmd =
      app.add_subcommand("export", "write inputs for Calculon, ASTRA-sim, NERSC perf model, vTrain");
  export_cmd->add_option("RESULTS_DIR", export_src, "results folder or a calibration.json")->required();
  export_cmd->add_option("--to", export_to_target, "calculon | astrasim | nersc | vtrain | all")->required();
  export_cmd->add_option("-o,--output", export_out, "output folder (default RESULTS_DIR/export)");
  std::string set_help = "a figure by hand, KEY=VALUE (repeatable):";
  for (const auto& spec : export_setting_specs()) set_help += "\n  " + spec.key + " [" + spec.unit + "]: " + spec.fills;
  export_cmd->add_option("--set", export_set, set_help)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  std::string base_dir, cur_dir, markdown, junit, compare_json;
  double threshold = 0.05;
  auto* compare_cmd = app.add_subcommand("compare", "flag regressions of CURRENT against BASELINE per point");
  compare_cmd->add_option("BASELINE_DIR", base_dir, "baseline results folder")->required();
  compare_cmd->add_option("CURRENT_DIR", cur_dir, "current results folder")->required();
  gpucal::add_number(*compare_cmd, "--threshold", threshold, "relative change of the median time that matters",
                     {.min = 0, .max = 1e6})
      ->capture_default_str();
  compare_cmd->add_option("--markdown", markdown, "write a Markdown report");
  compare_cmd->add_option("--junit", junit, "write JUnit XML (one testcase per point)");
  compare_cmd->add_option("--json", compare_json, "write the comparison as JSON (for plots/plot_compare.py)");

  std::vector<std::string> import_logs;
  std::string import_out;
  ImportOptions import_options;
  auto* import_cmd = app.add_subcommand("import",
                                        "read nccl-tests/rccl-tests (text or -J JSON) and OSU logs into a "
                                        "results folder (collectives.csv, p2p.csv)");
  import_cmd->add_option("LOG", import_logs, "log files")->required()->check(CLI::ExistingFile);
  import_cmd->add_option("--out", import_out, "results folder to create (must not exist, or be empty)")
      ->required();
  import_cmd
      ->add_option("--ranks-per-node", import_options.ranks_per_node,
                   "ranks per node, for logs that name no hosts")
      ->check(gpucal::number_check<int>({.min = 1, .max = 1 << 20}));
  import_cmd
      ->add_option("--nranks", import_options.nranks,
                   "ranks of the run, for logs that do not say (OSU collectives)")
      ->check(gpucal::number_check<int>({.min = 1, .max = 1 << 24}));
  import_cmd->add_option("--device", import_options.device, "device name, for logs that print none");
  import_cmd
      ->add_option(
          "--collective", import_options.collective,
          "collective measured, for nccl-tests logs with neither a header nor a command line naming it")
      ->check(CLI::IsMember({"allreduce", "allgather", "reduce_scatter", "alltoall", "broadcast", "reduce",
                             "sendrecv", "gather", "scatter", "hypercube"}));

  std::string predict_source, predict_sizes;
  CommQuery predict_query;
  bool predict_json = false;
  auto* predict_cmd = app.add_subcommand(
      "predict-comm",
      "communication time, bandwidth and provenance (measured/interpolated/extrapolated) from the fits");
  predict_cmd->add_option("RESULTS_DIR", predict_source, "results folder or a calibration.json")->required();
  predict_cmd
      ->add_option("--collective", predict_query.collective,
                   "allreduce, allgather, reduce_scatter, alltoall, ...")
      ->required();
  gpucal::add_number(*predict_cmd, "--nranks", predict_query.nranks, "ranks in the group", {.min = 2, .max = 1 << 24})
      ->required();
  gpucal::add_number(*predict_cmd, "--nnodes", predict_query.nnodes, "nodes the group spans",
                     {.min = 1, .max = 1 << 24});
  gpucal::add_number(*predict_cmd, "--ranks-per-node", predict_query.ranks_per_node, "ranks per node",
                     {.min = 1, .max = 1 << 20});
  predict_cmd
      ->add_option("--size", predict_sizes,
                   "S in bytes (nccl-tests' convention), axis syntax: 256M, 1M,4M, 8:1G:x2")
      ->required();
  predict_cmd->add_option("--dtype", predict_query.dtype,
                          "use this dtype's groups (default: fp32, then bf16, then any)");
  predict_cmd->add_flag("--json", predict_json, "print the predictions as JSON");
  gpucal::predict::PredictCommand step_predict;
  auto* step_predict_cmd = step_predict.add_to(app);
  const auto run_fleet_verbs = gpucal::fleet::add_commands(app, argv[0]);

  if (const std::string why = gpucal::missing_option_value(app, argc, argv); !why.empty()) {
    gpucal::write_stderr_line("gpucal: error: " + why);
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help
  } catch (const CLI::ParseError& e) {
    gpucal::write_stderr_line(std::string("gpucal: error: ") + e.what());  // one line, exit 2 like every bad input
    return kExitBadInput;
  }
  try {
    if (*run_cmd) {
      run.plots = !no_plots;
      return run_suite(run, std::cout);
    }
    if (*fit_cmd) return cmd_fit(fit_dir, fit_out, fit_report);
    if (*export_cmd) return cmd_export(export_src, export_to_target, export_out, export_set);
    if (*compare_cmd) return cmd_compare(base_dir, cur_dir, threshold, markdown, junit, compare_json);
    if (*step_predict_cmd) return step_predict.run();
    if (*predict_cmd) return cmd_predict_comm(predict_source, predict_query, predict_sizes, predict_json);
    if (const auto rc = run_fleet_verbs()) return *rc;
    if (*import_cmd)
      return cmd_import(import_logs, import_out, import_options, std::vector<std::string>(argv, argv + argc));
  } catch (const gpucal::WriteError& e) {
    gpucal::write_stderr_line(std::string("gpucal: error: ") + e.what());  // the inputs were fine; the output failed
    return kExitFailure;
  } catch (const std::exception& e) {
    gpucal::write_stderr_line(std::string("gpucal: error: ") + e.what());
    return kExitBadInput;
  }
  return kExitBadInput;
}
