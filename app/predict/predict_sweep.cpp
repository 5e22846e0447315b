// gpucal predict --sweep: every combination of the sweep's layouts predicted, over the machine's
// cores, and ranked by tokens/s (app/predict/predict_command.h).
#include <algorithm>
#include <atomic>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "app/predict/predict_command.h"
#include "app/predict/predict_text.h"
#include "core/driver/sweep.h"
#include "core/errors.h"
#include "core/model/bounds.h"
#include "core/output/file_io.h"

namespace gpucal::predict {

using nlohmann::json;

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
    Prediction p = predict_step(coster, cal, spec, w, options);
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
                                         const calibration::ResultsDir& results, const json& cal,
                                         const model::ModelSpec& spec, const PredictOptions& options) {
  std::vector<SweepAnswer> answers(layouts.size());
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // Below a few hundred layouts a second worker's start-up outweighs what it saves.
  const std::size_t workers = std::min<std::size_t>(cores, std::max<std::size_t>(1, layouts.size() / 256));
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failures(workers);
  auto work = [&](std::size_t id) {
    try {
      const OpCoster coster(results, cal, options.cost);
      for (std::size_t i = next++; i < layouts.size(); i = next++)
        answers[i] = predict_layout(coster, cal, spec, layouts[i], options);
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
  std::vector<SweepAnswer> answers = predict_layouts(layouts, results, cal, spec, summary);
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
