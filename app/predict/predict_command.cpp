#include "app/predict/predict_command.h"

#include <cmath>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/common/calibration_json.h"
#include "app/common/number_text.h"
#include "app/predict/predict_text.h"
#include "app/fit/calibration_build.h"
#include "app/common/output_guard.h"
#include "core/errors.h"
#include "core/formulas/peaks.h"
#include "core/output/file_io.h"
#include <filesystem>
#include <set>

namespace gpucal::predict {

using nlohmann::json;

CLI::App* PredictCommand::add_to(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "predict", "predict one training step's time from a results folder: per-op costs, communication model, "
                 "overlap, pipeline bubble, tokens/s, MFU");
  app_ = cmd;
  cmd->add_option("RESULTS_DIR", results_dir, "results folder (bench CSVs; calibration.json when present)")->required();
  flags.add(*cmd, "");
  policy.add(*cmd, options);
  add_number(*cmd, "--peak-tflops", options.peak_tflops,
             "peak for MFU (default: the calibration's compute.gemm.<dtype>.peak_tflops)",
             {.min = 0, .min_exclusive = true});
  cmd->add_option("-o,--output", out_path, "predict.json path (default RESULTS_DIR/predict.json)")
      ->check(CLI::Validator(
          [](std::string& text) { return text.empty() ? std::string("expected a path, got ''") : ""; }, "PATH"))->type_name("FILE");
  cmd->add_flag("--allow-missing", options.allow_missing,
                "leave out (and list) operations nothing measures or models instead of failing");
  calibration::add_allow_suspect_flag(*cmd, allow_suspect);
  cmd->add_option("--sweep", sweep,
                  "rank layouts by tokens/s: tp=1,2,4,8 pp=1,2 ... (every combination; keys tp, pp, dp, cp, ep, "
                  "micro-batch, global-batch, zero, each once, not also given as a flag); with --global-batch G every "
                  "layout runs G sequences a step (those that cannot are skipped), else each its micro-batch x dp; "
                  "layouts that leave operations out (--allow-missing) rank after every complete one")
      ->expected(1, -1);
  cmd->add_flag("--quiet", quiet, "no per-op table");
  cmd->add_flag("--measure-step", measure_step,
                "compare with the step bench_step measured (RESULTS_DIR/step.csv, same model and layout): "
                "predicted / measured; without it the comparison is made when such a row exists");
  cmd->footer(calibration::examples_footer({
      {"gpucal predict results/smoke --model llama3-8b --tp 2 --dp 2",
       "one step of Llama 3 8B at TP 2 x DP 2 from a calibration run"},
      {"gpucal predict h100/ --model llama3-70b --tp 8 --pp 4 --dp 8 --global-batch 512 --overlap tp,dp "
       "--schedule interleaved --virtual-stages 2",
       "a large layout with overlapped communication and an interleaved schedule"},
      {"gpucal predict h100/ --model llama3-8b --sweep tp=1,2,4 pp=1,2", "every layout of a sweep, ranked"},
  }));
  return cmd;
}

namespace {

// A row label of the breakdown table padded to the value column (40 characters), so every
// ms() value lines up whatever the label holds; a longer label keeps one space before it.
std::string label(const std::string& text) {
  constexpr std::size_t kValueColumn = 40;
  return text.size() < kValueColumn ? text + std::string(kValueColumn - text.size(), ' ') : text + " ";
}

std::string pct(double part, double whole) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%6.1f%%", whole > 0 ? 100 * part / whole : 0.0);
  return buf;
}

std::string prov(const json& f) {
  std::string s = f["provenance"].is_null() ? "-" : f["provenance"].get<std::string>();
  std::string counts;
  for (const auto& [k, v] : f["ops_by_provenance"].items())
    counts += (counts.empty() ? "" : ", ") + std::to_string(v.get<int>()) + " " + k;
  return counts.empty() ? s : s + " (" + counts + ")";
}

void print_table(const Prediction& p, const model::Workload& w, bool per_op) {
  const json& d = p.document;
  const json& b = d["breakdown"];
  const double step = b["step"]["time_s"].get<double>();
  const auto& l = w.layout;
  std::cout << "gpucal predict: " << w.model.name << " (scale " << l.scale << ", " << w.facts.layers_total
            << " layers), tp=" << l.tp << " pp=" << l.pp << " dp=" << l.dp << " cp=" << l.cp << " ep=" << l.ep
            << (l.sp ? " sp" : "") << " seq=" << w.facts.seq << " micro_batch=" << l.micro_batch
            << " micro_batches=" << w.facts.micro_batches << " dtype=" << to_string(l.dtype)
            << (l.fp8_gemms ? " (linear GEMMs fp8_e4m3)" : "")
            << "; overlap " << d["policy"]["overlap"].get<std::string>() << ", schedule "
            << d["policy"]["schedule"].get<std::string>() << "\n";
  if (per_op) {
    std::cout << "  op                                   calls   us/call     per step   provenance\n";
    for (const auto& op : d["ops"]) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-36s %6lld %9.2f %s   %s\n",
                    (op["bench"].get<std::string>() + " " + op["op_role"].get<std::string>()).substr(0, 36).c_str(),
                    static_cast<long long>(op["calls_per_step"].get<int64_t>()), op["time_us_per_call"].get<double>(),
                    ms(op["time_s_per_step"].get<double>()).c_str(), op["provenance"].get<std::string>().c_str());
      std::cout << line;
    }
  }
  std::cout << label("  breakdown (one rank, one step)") << "      time    share  provenance\n";
  for (const char* c : {"gemm", "attention", "memory"})
    std::cout << label("  compute " + std::string(c)) << ms(b["compute"][c]["time_s"]) << " "
              << pct(b["compute"][c]["time_s"], step) << "  " << prov(b["compute"][c]) << "\n";
  for (const auto& [dim, f] : b["communication"].items()) {
    if (f["time_s"].get<double>() == 0 && f["provenance"].is_null()) continue;
    std::cout << label("  comm " + dim + " total") << ms(f["time_s"]) << " " << pct(f["time_s"], step) << "  "
              << prov(f) << "\n"
              << label("  comm " + dim + " exposed (hidden " + ms(f["hidden_s"], 0) + ")") << ms(f["exposed_s"])
              << " " << pct(f["exposed_s"], step) << "\n";
  }
  char number[64];
  const std::string incomplete =
      b.contains("incomplete") ? "n/a (" + std::to_string(p.missing.size()) + " op(s) left out)" : "";
  if (incomplete.empty())
    std::snprintf(number, sizeof number, "%10.6g", b["tokens_per_s"].get<double>());
  else
    std::snprintf(number, sizeof number, "%s", incomplete.c_str());
  std::string mfu = !incomplete.empty()  ? incomplete
                    : b["mfu"].is_null() ? "n/a (" + d["policy"]["peak_source"].get<std::string>() + ")"
                                         : percent(b["mfu"].get<double>());
  if (mfu.size() < 10) mfu.insert(0, 10 - mfu.size(), ' ');
  if (!b["mfu"].is_null()) mfu += " of " + calibration::significant(d["policy"]["peak_tflops"].get<double>(), 4) + " TFLOP/s";
  const std::string fraction = calibration::significant(b["bubble"]["fraction_of_pipeline"].get<double>(), 3);
  std::cout << label("  pipeline bubble (" + fraction + " of " + ms(b["pipeline_s"], 0) + ")")
            << ms(b["bubble"]["time_s"]) << " " << pct(b["bubble"]["time_s"], step) << "\n"
            << label("  step time") << ms(step) << "          " << prov(b["step"]) << "\n"
            << label("  step interval") << ms(b["step"]["interval"]["lo_s"]) << " .." << ms(b["step"]["interval"]["hi_s"])
            << "  (ops' interval bounds summed: " << b["step"]["interval"]["ops_with_interval"].get<int>()
            << " ops with an interval, " << b["step"]["interval"]["ops_without_interval"].get<int>()
            << " at their time)\n"
            << label("  tokens/s") << number << "\n"
            << label("  MFU") << mfu << "\n";
  for (const auto& m : p.missing) std::cout << "  left out: " << m << "\n";
  if (d.contains("measured_step")) {
    const json& m = d["measured_step"];
    std::snprintf(number, sizeof number, "%10.3f", m["predicted_over_measured"].get<double>());
    std::cout << label("  measured step (bench_step, " + std::to_string(m["samples"].get<int64_t>()) + " samples)")
              << ms(m["time_s_median"]) << "  p10 " << ms(m["p10_s"], 0) << ", p90 " << ms(m["p90_s"], 0) << "\n"
              << label("  predicted for the same operations") << ms(m["predicted_s"]) << "\n"
              << label("  predicted / measured") << number
              << (m["roles_skipped"].get<std::string>().empty()
                      ? std::string()
                      : "  (not run, not counted: " + m["roles_skipped"].get<std::string>() + ")")
              << "\n";
  }
}

// A GEMM table whose best figure is above its recorded peak (a public table's fp8, say) prices
// GEMMs too fast: said before any prediction from it.
void warn_gemm_tables_above_peak(const json& cal, const std::set<std::string>& used, std::ostream& err) {
  if (!cal.is_object() || !cal.contains("compute") || !cal["compute"].is_object() ||
      !cal["compute"].contains("gemm") || !cal["compute"]["gemm"].is_object())
    return;
  for (const auto& [dtype, table] : cal["compute"]["gemm"].items()) {
    if (!used.count(dtype)) continue;
    if (!table.is_object() || !table.contains("best_tflops") || !table.contains("peak_tflops")) continue;
    if (!table["best_tflops"].is_number() || !table["peak_tflops"].is_number()) continue;
    const double best = table["best_tflops"].get<double>(), peak = table["peak_tflops"].get<double>();
    if (beyond_recorded_peak(best, peak))
      err << "gpucal: warning: compute.gemm." << dtype << " reaches " << static_cast<long long>(std::llround(best)) << " TFLOP/s, above its peak "
          << static_cast<long long>(std::llround(peak)) << ": not physical, so GEMMs priced from it are too fast\n";
  }
}

}  // namespace

void PredictCommand::check_flag_combinations() const {
  policy.check(options);
  for (const auto& item : sweep) {
    const std::string key = sweep_key(item);
    const CLI::Option* flag = app_ ? app_->get_option_no_throw("--" + key) : nullptr;
    if (flag && flag->count() > 0)
      throw UsageError("--sweep " + item + ": --" + key + " is given too; sweep the key or set the flag, not both");
  }
}

void PredictCommand::check_without_inputs() {
  if (!flags.active()) throw UsageError("gpucal predict needs --model NAME or --model-config FILE");
  check_flag_combinations();
  const model::ParallelLayout base = flags.resolved_layout("host");
  if (!sweep.empty()) {
    sweep_layouts(base, sweep);  // the items; a layout the model cannot run is a skip, not an error
    return;
  }
  validate_schedule(options.schedule, model::derive_workload(flags.spec(), base));
}

int PredictCommand::run() {
  try {
    check_without_inputs();  // the flags, the model and the layout before the folder is read
    options.overlap = parse_overlap(policy.overlap);
    calibration::refuse_output_over_inputs("--output", out_path, {results_dir}, /*reads_calibration_json=*/true);
    const calibration::ResultsDir results = calibration::load_results_dir(results_dir, allow_suspect);
    for (const auto& note : results.suspect_notes) std::cerr << "gpucal: warning: " << note << "\n";
    options.suspect_rows_left_out = !allow_suspect && !results.suspect_notes.empty();
    const std::string cal_path = results_dir + "/calibration.json";
    const json cal = std::filesystem::exists(cal_path) ? calibration::read_calibration_file(cal_path)
                                                       : calibration::build_calibration(results);
    const std::string backend = results_backend(results);
    const model::ParallelLayout asked = flags.resolved_layout(backend);
    warn_gemm_tables_above_peak(cal, {to_string(asked.dtype), to_string(asked.gemm_dtype())}, std::cerr);
    const std::string out = out_path.empty() ? results_dir + "/predict.json" : out_path;
    if (!sweep.empty()) return run_sweep(cal, results, backend, out);  // a coster per worker
    const OpCoster coster(results, cal, options.cost);
    const model::Workload w = flags.derive(backend);
    Prediction p = predict_step(coster, cal, flags.spec(), w, options);
    const bool compared = compare_measured_step(p, results_dir + "/step.csv", w);
    if (measure_step && !compared)
      throw PredictError("--measure-step: no ok row for this model and layout in " + results_dir +
                         "/step.csv (run bench_step with the same flags --out " + results_dir + "/step.csv)");
    print_table(p, w, !quiet);
    calibration::write_json_file(p.document, out);
    std::cout << "wrote " << out << "\n";
    return 0;
  } catch (const PredictError& e) {  // the inputs are well formed but do not cover the step
    std::cerr << "gpucal: error: predict: " << e.what() << "\n";
    return 1;
  } catch (const WriteError& e) {
    std::cerr << "gpucal: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {  // usage, a missing or malformed folder or calibration
    std::cerr << "gpucal: error: predict: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace gpucal::predict
