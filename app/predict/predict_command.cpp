#include "app/predict/predict_command.h"

#include <cmath>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/common/calibration_json.h"
#include "app/fit/calibration_build.h"
#include "app/common/output_guard.h"
#include "core/errors.h"
#include "core/formulas/peaks.h"
#include "core/output/file_io.h"
#include <filesystem>
#include <set>

#include "core/driver/flag_checks.h"
#include "core/model/bounds.h"
#include "core/driver/sweep.h"

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

std::string sweep_key(const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 >= item.size())
    throw UsageError("--sweep: expected KEY=V1,V2,..., got '" + item + "'");
  std::string key = item.substr(0, eq);
  std::replace(key.begin(), key.end(), '_', '-');
  static const std::set<std::string> keys{"tp", "pp", "dp", "cp", "ep", "micro-batch", "global-batch", "zero"};
  if (!keys.count(key))
    throw UsageError("--sweep: unknown key '" + item.substr(0, eq) +
                     "' (tp, pp, dp, cp, ep, micro-batch, global-batch, zero)");
  return key;
}

std::vector<model::ParallelLayout> sweep_layouts(const model::ParallelLayout& base,
                                                 const std::vector<std::string>& items) {
  std::vector<model::ParallelLayout> out{base};
  std::set<std::string> seen;
  for (const auto& item : items) {
    const std::string key = sweep_key(item);
    if (!seen.insert(key).second) throw UsageError("--sweep: key '" + key + "' given twice; list its values once");
    std::vector<int64_t> values;
    std::stringstream s(item.substr(item.find('=') + 1));
    for (std::string v; std::getline(s, v, ',');) {
      const int64_t value = parse_size(v, "sweep " + key);
      if (key == "zero" ? value > 3 : value < 1)
        throw UsageError("--sweep " + key + "=" + v + ": expected " +
                         (key == "zero" ? std::string("0, 1, 2 or 3") : std::string("at least 1")));
      if (std::find(values.begin(), values.end(), value) != values.end())
        throw UsageError("--sweep " + item + ": " + v + " is listed twice");
      values.push_back(value);
    }
    std::vector<model::ParallelLayout> next;
    for (const auto& l : out)
      for (int64_t v : values) {
        model::ParallelLayout c = l;
        if (key == "tp") c.tp = v;
        else if (key == "pp") c.pp = v;
        else if (key == "dp") c.dp = v;
        else if (key == "cp") c.cp = v;
        else if (key == "ep") c.ep = v;
        else if (key == "micro-batch") c.micro_batch = v;
        else if (key == "global-batch") c.global_batch = v;
        else c.zero = static_cast<int>(v);
        model::check_bounds(c);  // a value out of its range is a usage error, not a skipped layout
        next.push_back(c);
      }
    out = std::move(next);
  }
  return out;
}

namespace {

std::string ms(double s, int width = 10) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%*.3f ms", width, s * 1e3);
  return buf;
}

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

// A fraction as a percentage with one decimal ("32.7%"), a rate with 4 significant digits.
std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}
std::string significant(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
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
  if (!b["mfu"].is_null()) mfu += " of " + significant(d["policy"]["peak_tflops"].get<double>()) + " TFLOP/s";
  std::ostringstream fraction;
  fraction << b["bubble"]["fraction_of_pipeline"].get<double>();
  std::cout << label("  pipeline bubble (" + fraction.str() + " of " + ms(b["pipeline_s"], 0) + ")")
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

std::string r_pad(const std::string& text, std::size_t width) {
  return text.size() < width ? text + std::string(width - text.size(), ' ') : text;
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
    if (!flags.active()) throw UsageError("gpucal predict needs --model NAME or --model-config FILE");
    check_flag_combinations();
    options.overlap = parse_overlap(policy.overlap);
    calibration::refuse_output_over_inputs("--output", out_path, {results_dir}, /*reads_calibration_json=*/true);
    const calibration::ResultsDir results = calibration::load_results_dir(results_dir, allow_suspect);
    for (const auto& note : results.suspect_notes) std::cerr << "gpucal: warning: " << note << "\n";
    const std::string cal_path = results_dir + "/calibration.json";
    const json cal = std::filesystem::exists(cal_path) ? calibration::read_calibration_file(cal_path)
                                                       : calibration::build_calibration(results);
    const std::string backend = results_backend(results);
    const model::ParallelLayout asked = flags.resolved_layout(backend);
    warn_gemm_tables_above_peak(cal, {to_string(asked.dtype), to_string(asked.gemm_dtype())}, std::cerr);
    const OpCoster coster(results, cal, options.cost);
    const std::string out = out_path.empty() ? results_dir + "/predict.json" : out_path;
    if (!sweep.empty()) return run_sweep(cal, results, backend, out);
    const model::Workload w = flags.derive(backend);
    Prediction p = predict_step(coster, cal, w, options);
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

namespace {

// One layout of a sweep, predicted.
struct Ranked {
  model::ParallelLayout layout;  // seq and global_batch resolved
  std::string label;
  Breakdown breakdown;
  std::string provenance;  // the step's, "-" when none
  std::string row;         // the layout's JSON row, one line, without its rank
  std::vector<std::string> missing;
};

std::string layout_label(const model::ParallelLayout& l) {
  return "tp=" + std::to_string(l.tp) + " pp=" + std::to_string(l.pp) + " dp=" + std::to_string(l.dp) +
         " cp=" + std::to_string(l.cp) + " ep=" + std::to_string(l.ep) + " mb=" + std::to_string(l.micro_batch) +
         " gb=" + (l.global_batch > 0 ? std::to_string(l.global_batch) : std::string("auto")) +
         " zero=" + std::to_string(l.zero);
}

// One layout predicted into its row; an invalid or uncostable layout is a skip with the reason.
struct SweepAnswer {
  std::optional<Ranked> ranked;
  std::string skipped;
};

SweepAnswer predict_layout(const OpCoster& coster, const json& cal, const model::ModelSpec& spec,
                           const model::ParallelLayout& l, const PredictOptions& options) {
  try {
    const model::Workload w = model::derive_workload(spec, l);
    Prediction p = predict_step(coster, cal, w, options);
    Ranked r;
    r.layout = l;
    r.layout.seq = w.facts.seq;
    r.layout.global_batch = w.facts.global_batch;
    r.label = layout_label(r.layout);
    r.breakdown = p.breakdown;
    json figures = std::move(p.document["breakdown"]);
    const json& prov = figures["step"]["provenance"];
    r.provenance = prov.is_null() ? "-" : prov.get<std::string>();
    figures["step"]["interval"].erase("rule");  // stated once, in the document's policy
    r.missing = std::move(p.missing);
    // Keys in the dump's (sorted) order, `rank` last: the ranking appends it.
    r.row = json{{"layout", model::to_json(r.layout)},
                 {"facts", model::to_json(w.facts)},
                 {"complete", r.missing.empty()},
                 {"missing", r.missing},
                 {"breakdown", std::move(figures)}}
                .dump();
    return {std::move(r), {}};
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {  // an invalid or uncostable layout is reported, not fatal
    return {std::nullopt, e.what()};
  }
}

// Every layout predicted, in the sweep's order, over the machine's cores: each worker costs
// with its own coster (its answers memoised apart) and takes the next unclaimed layout. A
// failure other than a layout's own (out of memory) is raised here, after every worker stopped.
std::vector<SweepAnswer> predict_layouts(const std::vector<model::ParallelLayout>& layouts,
                                         const std::function<std::unique_ptr<OpCoster>()>& make_coster,
                                         const json& cal, const model::ModelSpec& spec, const PredictOptions& options) {
  std::vector<SweepAnswer> answers(layouts.size());
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // Below a few hundred layouts a second worker's start-up outweighs what it saves.
  const std::size_t workers = std::min<std::size_t>(cores, std::max<std::size_t>(1, layouts.size() / 256));
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failures(workers);
  auto work = [&](std::size_t id) {
    try {
      const std::unique_ptr<OpCoster> coster = make_coster();
      for (std::size_t i = next++; i < layouts.size(); i = next++)
        answers[i] = predict_layout(*coster, cal, spec, layouts[i], options);
    } catch (...) {
      failures[id] = std::current_exception();
      next = layouts.size();
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t id = 1; id < workers; ++id) pool.emplace_back(work, id);
  work(0);
  for (auto& t : pool) t.join();
  for (const auto& f : failures)
    if (f) std::rethrow_exception(f);
  return answers;
}

// The ranking as a table on standard output; returns the layouts' JSON rows, one line each,
// with their ranks. Every row's step interval follows the one rule the document's policy states.
std::vector<std::string> print_ranking(std::vector<Ranked>& ranked) {
  std::vector<std::string> rows;
  rows.reserve(ranked.size());
  std::size_t width = 6;
  for (const auto& r : ranked) width = std::max(width, r.label.size());
  std::cout << "rank  " << r_pad("layout", width) << "   step time    tokens/s      MFU   provenance\n";
  int rank = 0;
  for (auto& r : ranked) {
    const bool complete = r.missing.empty();
    char line[120];
    char tokens[32];
    if (complete)
      std::snprintf(tokens, sizeof tokens, "%11.1f", r.breakdown.tokens_per_s);
    else
      std::snprintf(tokens, sizeof tokens, "%11s", "n/a");
    std::snprintf(line, sizeof line, " %s %s %7s   ", ms(r.breakdown.step_s).c_str(), tokens,
                  complete && r.breakdown.mfu >= 0 ? percent(r.breakdown.mfu).c_str() : "n/a");
    std::cout << std::setw(4) << ++rank << (complete ? "  " : "* ") << r_pad(r.label, width) << line << r.provenance
              << (complete ? "" : "; incomplete: " + std::to_string(r.missing.size()) + " op(s) left out") << "\n";
    for (const auto& m : r.missing) std::cout << "        left out: " << m << "\n";
    r.row.pop_back();  // the closing brace: `rank` is the last key
    rows.push_back(std::move(r.row) + ",\"rank\":" + std::to_string(rank) + "}");
  }
  return rows;
}

// The sweep's document as indented JSON with `ranked` one layout per line: a ranking of
// thousands of layouts stays a file to grep and page through, at a third of the indented size.
std::string sweep_document_text(json doc, const std::vector<std::string>& rows) {
  const std::string mark = "\"ranked rows\"";
  doc["ranked"] = "ranked rows";
  const std::string frame = doc.dump(2);
  const std::size_t at = frame.find(mark);
  std::size_t size = frame.size() + 16;
  for (const auto& r : rows) size += r.size() + 6;
  std::string text;
  text.reserve(size);
  text.append(frame, 0, at).append("[");
  for (std::size_t i = 0; i < rows.size(); ++i) text.append(i ? ",\n    " : "\n    ").append(rows[i]);
  text.append(rows.empty() ? "]" : "\n  ]").append(frame, at + mark.size()).append("\n");
  return text;
}

}  // namespace

// Every layout of the sweep predicted and ranked by tokens/s: complete layouts first, then
// those that left operations out (--allow-missing), whose step time lacks those operations and
// so is not comparable with a complete one; each lists what it left out.
int PredictCommand::run_sweep(const json& cal, const calibration::ResultsDir& results, const std::string& backend,
                              const std::string& out) {
  const model::ModelSpec spec = flags.spec();
  const model::ParallelLayout base = flags.resolved_layout(backend);
  PredictOptions summary = options;
  summary.ops_in_document = false;  // a layout's row keeps its breakdown only
  const std::vector<model::ParallelLayout> layouts = sweep_layouts(base, sweep);
  std::vector<Ranked> ranked;
  json skipped = json::array();
  auto make_coster = [&] { return std::make_unique<OpCoster>(results, cal, options.cost); };
  std::vector<SweepAnswer> answers = predict_layouts(layouts, make_coster, cal, spec, summary);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    if (answers[i].ranked)
      ranked.push_back(std::move(*answers[i].ranked));
    else
      skipped.push_back({{"layout", layout_label(layouts[i])}, {"reason", answers[i].skipped}});
  }
  // By tokens/s: at one global batch the same order as step time, and across global batches the
  // figure that compares different work. An incomplete layout has no tokens/s: by step time.
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.missing.empty() != b.missing.empty()) return a.missing.empty();
    if (!a.missing.empty()) return a.breakdown.step_s < b.breakdown.step_s;
    return a.breakdown.tokens_per_s > b.breakdown.tokens_per_s;
  });
  std::set<int64_t> batches;
  for (const auto& r : ranked) batches.insert(r.layout.global_batch);
  const bool incomplete =
      std::any_of(ranked.begin(), ranked.end(), [](const Ranked& r) { return !r.missing.empty(); });
  json doc{{"schema_version", 1},
           {"model", model::to_json(model::model_as_run(spec, base))},
           {"sweep", sweep},
           {"policy",
            {{"overlap", to_string(options.overlap)},
             {"schedule", options.schedule.name},
             {"step_interval_rule", kStepIntervalRule}}}};
  const std::vector<std::string> rows = print_ranking(ranked);
  const bool batch_swept = std::any_of(sweep.begin(), sweep.end(),
                                       [](const std::string& item) { return sweep_key(item) == "global-batch"; });
  if (batches.size() > 1 && !batch_swept)
    std::cout << "  the layouts run " << batches.size() << " different global batches (micro-batch x dp): ranked by "
              << "tokens/s; give --global-batch G to compare them at one\n";
  if (incomplete)
    std::cout << "  * incomplete (--allow-missing): its step time lacks the operations left out; ranked after "
                 "every complete layout\n";
  for (const auto& s : skipped)
    std::cout << "  skipped " << s["layout"].get<std::string>() << ": " << s["reason"].get<std::string>() << "\n";
  doc["skipped"] = skipped;
  if (ranked.empty())
    throw PredictError("--sweep: no layout could be predicted (" + std::to_string(skipped.size()) + " skipped)");
  write_file_atomic(out, sweep_document_text(std::move(doc), rows));
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace gpucal::predict
