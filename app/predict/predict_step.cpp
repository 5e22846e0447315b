#include "app/predict/predict_step.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "app/common/csv_table.h"

namespace gpucal::predict {

using nlohmann::json;

namespace {
int rank_of(Provenance p) { return p == Provenance::measured ? 0 : p == Provenance::interpolated ? 1 : 2; }

// A figure's provenance: the weakest of its parts, with how many parts had each.
struct Tally {
  std::array<int, 3> counts{};  // by rank_of: measured, interpolated, extrapolated
  int worst = -1;
  void add(Provenance p) {
    ++counts[rank_of(p)];
    worst = std::max(worst, rank_of(p));
  }
  void add(const Tally& t) {
    for (std::size_t i = 0; i < counts.size(); ++i) counts[i] += t.counts[i];
    worst = std::max(worst, t.worst);
  }
  json to_json() const {
    static const char* names[] = {"measured", "interpolated", "extrapolated"};
    json by = json::object();
    for (std::size_t i = 0; i < counts.size(); ++i)
      if (counts[i] > 0) by[names[i]] = counts[i];
    return {{"provenance", worst < 0 ? json(nullptr) : json(names[worst])}, {"ops_by_provenance", std::move(by)}};
  }
};

json figure(double seconds, const Tally& t) {
  json j = t.to_json();
  j["time_s"] = seconds;
  return j;
}
using Tallies = std::map<std::string, Tally>;  // gemm, attention, memory, comm.<dim>

// The ops costed three ways: at their times, and at the low and high ends of their intervals.
struct CostedSets {
  std::vector<CostedOp> point, lo, hi;
  int with_interval = 0, without_interval = 0;
};

// Each op's cost, as predict.json's ops[]: costed ops into `costed`, the provenance of each into
// its category's tally, the ops nothing costs into `missing`.
json cost_ops(const OpCoster& coster, const model::Workload& w, CostedSets& costed, Tallies& tallies,
              std::vector<std::string>& missing, bool with_entries) {
  json ops = json::array();
  for (auto* set : {&costed.point, &costed.lo, &costed.hi}) set->reserve(w.ops.size());
  for (const auto& op : w.ops) {
    std::string why;
    const auto cost = coster.cost(op, w.layout, why);
    if (!cost) {
      missing.push_back(op.bench() + " " + op.role + " (" + op.shape_text() + "): " + why);
      continue;
    }
    costed.point.emplace_back(&op, cost->time_us);
    costed.lo.emplace_back(costed.point.back(), cost->lo_us);
    costed.hi.emplace_back(costed.point.back(), cost->hi_us);
    ++(cost->has_interval ? costed.with_interval : costed.without_interval);
    const std::string& dim = costed.point.back().dimension;
    const std::string category = dim.empty() ? op.bench() : "comm." + dim;
    tallies[category].add(cost->provenance);
    if (!with_entries) continue;
    json j = model::to_json(op);
    j["category"] = dim.empty() ? "compute" : "communication";
    if (!dim.empty()) j["dimension"] = dim;
    j["per_step"] = per_step(op);
    j["time_us_per_call"] = cost->time_us;
    j["time_s_per_step"] = cost->time_us * 1e-6 * static_cast<double>(op.calls_per_step);
    j["provenance"] = calibration::to_string(cost->provenance);
    j["method"] = cost->method;
    j["sources"] = cost->sources;
    j["interval_us_per_call"] = cost->has_interval ? json{{"lo", cost->lo_us}, {"hi", cost->hi_us}} : json(nullptr);
    j["interval_rule"] = cost->interval_rule;
    ops.push_back(j);
  }
  return ops;
}

// The peak MFU is taken against: --peak-tflops, else the calibration's GEMM peak of the dtype;
// 0 when neither.
struct Peak {
  double tflops = 0;
  std::string source;
};
Peak peak_of(const PredictOptions& options, const json& calibration, const std::string& dt) {
  if (options.peak_tflops > 0) return {options.peak_tflops, "--peak-tflops"};
  Peak peak{0, "none: no --peak-tflops and no compute.gemm." + dt + ".peak_tflops"};
  if (calibration.is_object() && calibration["compute"]["gemm"].contains(dt) &&
      calibration["compute"]["gemm"][dt]["peak_tflops"].is_number()) {
    peak.tflops = calibration["compute"]["gemm"][dt]["peak_tflops"].get<double>();
    peak.source = "calibration compute.gemm." + dt + ".peak_tflops";
  }
  return peak;
}

json policy_json(const PredictOptions& options, const Peak& peak) {
  return {{"overlap", to_string(options.overlap)},
          {"schedule", options.schedule.name},
          {"virtual_stages", options.schedule.name == "interleaved" ? options.schedule.virtual_stages : 1},
          {"ranks_per_node", options.cost.ranks_per_node},
          {"peak_tflops", peak.tflops > 0 ? json(peak.tflops) : json(nullptr)},
          {"peak_source", peak.source}};
}

// How each figure of the breakdown is made.
json conventions_json() {
  return {{"bubble",
           "bubble_s = the pipeline's time - pipeline_s; the pipeline's time = micro_batches x t_max + (sum over "
           "stages of t'_s - t_max) / virtual_stages, t_s a stage's pipeline time per micro-batch, t'_s with its pp "
           "messages halved (each message once), t_max the slowest stage's; (pp - 1) / (micro_batches x "
           "virtual_stages) x pipeline_s when the stages are equal and messages free"},
          {"pipeline", "pipeline_s = per-micro-batch compute + exposed tp, pp, cp, ep and ZeRO-3 messages"},
          {"step", "step_s = pipeline_s + bubble_s + per-step compute (optimizer) + per-step messages - hidden dp"},
          {"overlap_tp", "hidden tp = min(tp messages in the pipeline, GEMM time)"},
          {"overlap_dp",
           "hidden dp = min(dp gradient reductions - the last bucket, backward compute / micro_batches) + "
           "min(ZeRO-3 messages, pipeline compute - hidden tp)"},
          {"mfu", "model_flops / (peak_tflops x 1e12 x step_s); model_flops = the rank's GEMM flops (2mnk, forward, "
                  "dgrad, wgrad) + attention flops (fa2, backward 2.5x forward), no recomputation"},
          {"tokens_per_s", "global_batch x seq / step_s"}};
}

// The breakdown's figures, each with the provenance of the ops it sums.
json breakdown_json(const Breakdown& b, Tallies& tallies) {
  Tally compute, comm_all, all;
  for (const char* c : {"gemm", "attention", "memory"}) compute.add(tallies[c]);
  json comm = json::object();
  for (const auto& [dim, s] : b.comm_s) {
    const Tally& t = tallies["comm." + dim];
    comm_all.add(t);
    json j = figure(s, t);
    j["hidden_s"] = b.comm_hidden_s.at(dim);
    j["exposed_s"] = b.comm_exposed_s.at(dim);
    comm[dim] = j;
  }
  all.add(compute);
  all.add(comm_all);
  return {{"compute",
           {{"gemm", figure(b.gemm_s, tallies["gemm"])},
            {"attention", figure(b.attention_s, tallies["attention"])},
            {"memory", figure(b.memory_s, tallies["memory"])},
            {"total", figure(b.gemm_s + b.attention_s + b.memory_s, compute)},
            {"pipeline_s", b.compute_pipeline_s},
            {"per_step_s", b.compute_per_step_s},
            {"backward_s", b.backward_compute_s}}},
          {"communication", comm},
          {"pipeline_s", b.pipeline_s},
          {"bubble", {{"time_s", b.bubble_s}, {"fraction_of_pipeline", b.bubble_fraction}}},
          {"step", figure(b.step_s, all)},
          {"tokens_per_step", b.tokens_per_step},
          {"tokens_per_s", b.tokens_per_s},
          {"model_flops_per_step", b.model_flops},
          {"mfu", b.mfu >= 0 ? json(b.mfu) : json(nullptr)}};
}


// The pipeline's stages, each costed three ways as the rank's: its time, and the low and high
// ends of its ops' intervals (step_time.h's StageTime). A stage is derived once per kind: whether
// it holds the embedding or the loss, and its dense and MoE layers.
struct PipelineStages {
  std::vector<StageTime> point, lo, hi;
};

PipelineStages pipeline_stages(const OpCoster& coster, const model::ModelSpec& spec, const model::Workload& w,
                               const PredictOptions& options, const CostedSets& own, std::vector<std::string>& missing) {
  PipelineStages out;
  const int64_t pp = w.layout.pp;
  if (pp <= 1) return out;
  auto add = [&](const model::Workload& stage, const CostedSets& costed, int64_t count) {
    const auto& o = options;
    out.point.push_back(stage_time(compute_breakdown(costed.point, stage, o.overlap, o.schedule, 0)));
    out.lo.push_back(stage_time(compute_breakdown(costed.lo, stage, o.overlap, o.schedule, 0)));
    out.hi.push_back(stage_time(compute_breakdown(costed.hi, stage, o.overlap, o.schedule, 0)));
    for (auto* set : {&out.point, &out.lo, &out.hi}) set->back().stages = count;
  };
  using Kind = std::array<int64_t, 4>;  // first, last, dense layers, MoE layers
  auto kind_of = [](const model::StepFacts& f) {
    return Kind{f.first_stage ? 1 : 0, f.last_stage ? 1 : 0, f.dense_layers, f.moe_layers};
  };
  std::map<Kind, std::pair<int64_t, int64_t>> kinds;  // kind -> (a stage of it, how many)
  const Kind own_kind = kind_of(w.facts);
  for (int64_t stage = 0; stage < pp; ++stage) {
    model::ParallelLayout l = w.layout;
    l.pp_stage = stage;
    const Kind kind = stage == w.facts.stage ? own_kind : kind_of(model::derive_facts(w.model, l));
    auto [it, added] = kinds.try_emplace(kind, stage, 0);
    ++it->second.second;
  }
  for (const auto& [kind, at] : kinds) {
    if (kind == own_kind) {
      add(w, own, at.second);
      continue;
    }
    model::ParallelLayout l = w.layout;
    l.pp_stage = at.first;
    const model::Workload stage = model::derive_workload(spec, l);
    CostedSets costed;
    Tallies unused;
    std::vector<std::string> left_out;
    cost_ops(coster, stage, costed, unused, left_out, false);
    for (const auto& m : left_out) missing.push_back("pipeline stage " + std::to_string(at.first) + ": " + m);
    add(stage, costed, at.second);
  }
  return out;
}

json step_interval_json(const CostedSets& costed, const model::Workload& w, const PredictOptions& options,
                        double peak_tflops, const PipelineStages& stages) {
  const Breakdown lo = compute_breakdown(costed.lo, w, options.overlap, options.schedule, peak_tflops, stages.lo);
  const Breakdown hi = compute_breakdown(costed.hi, w, options.overlap, options.schedule, peak_tflops, stages.hi);
  return {{"lo_s", lo.step_s},
          {"hi_s", hi.step_s},
          {"rule", kStepIntervalRule},
          {"ops_with_interval", costed.with_interval},
          {"ops_without_interval", costed.without_interval}};
}

}  // namespace

const char* const kStepIntervalRule =
    "conservative: the step's arithmetic run with every op at the low end of its interval, then at the high end "
    "(the ops' interval bounds summed, as if all ops erred together); an op's interval is its measured row's "
    "p10..p90, a collective's or p2p message's 90% conformal interval, a GEMM priced by the surface its held-out "
    "p90 error widened per octave outside the measured shapes, or none (counted at its time: other compute tables)";

Prediction predict_step(const OpCoster& coster, const json& calibration, const model::ModelSpec& spec,
                        const model::Workload& w, const PredictOptions& options) {
  validate_schedule(options.schedule, w);
  Prediction out;
  CostedSets costed;
  Tallies tallies;
  const json ops = cost_ops(coster, w, costed, tallies, out.missing, options.ops_in_document);
  const PipelineStages stages = pipeline_stages(coster, spec, w, options, costed, out.missing);
  if (!out.missing.empty() && !options.allow_missing)
    throw PredictError("cannot cost " + std::to_string(out.missing.size()) + " operation(s), first: " +
                       out.missing.front() +
                       (options.suspect_rows_left_out
                            ? " (suspect rows were left out: pass --allow-suspect to use them, measure again on a quiet "
                              "machine, or pass --allow-missing)"
                            : " (measure it, run gpucal fit, or pass --allow-missing)"));
  const Peak peak = peak_of(options, calibration, to_string(w.layout.dtype));
  out.breakdown = compute_breakdown(costed.point, w, options.overlap, options.schedule, peak.tflops, stages.point);
  json doc;
  if (options.ops_in_document) {  // else the breakdown alone: a sweep's row
    doc["schema_version"] = 1;
    doc["model"] = to_json(w.model);
    doc["layout"] = to_json(w.layout);
    doc["facts"] = to_json(w.facts);
    doc["notes"] = w.notes;
    doc["policy"] = policy_json(options, peak);
    doc["conventions"] = conventions_json();
    doc["ops"] = ops;
  }
  doc["breakdown"] = breakdown_json(out.breakdown, tallies);
  doc["breakdown"]["step"]["interval"] = step_interval_json(costed, w, options, peak.tflops, stages);
  doc["missing"] = out.missing;
  if (!out.missing.empty()) {
    // Operations left out (--allow-missing): the step time lacks them, so no throughput is read
    // from it.
    out.breakdown.mfu = -1;
    doc["breakdown"]["tokens_per_s"] = nullptr;
    doc["breakdown"]["mfu"] = nullptr;
    doc["breakdown"]["incomplete"] = std::to_string(out.missing.size()) +
                                     " operation(s) left out: the step time lacks them; no tokens/s or MFU";
  }
  out.document = std::move(doc);
  return out;
}

bool compare_measured_step(Prediction& p, const std::string& step_csv, const model::Workload& w) {
  const auto& l = w.layout;
  // bench_step runs no fp8 step, and its rows do not record Megatron's pipeline-split accounting:
  // no row is such a step.
  if (l.fp8_gemms || l.account_embedding || l.account_loss) return false;
  if (!std::filesystem::exists(step_csv)) return false;
  const calibration::CsvTable t = calibration::CsvTable::read_file(step_csv);
  auto num = [](int64_t v) { return std::to_string(v); };
  const std::vector<std::pair<std::string, std::string>> cells{
      {"model", w.model.name}, {"tp", num(l.tp)}, {"pp", num(l.pp)}, {"dp", num(l.dp)}, {"cp", num(l.cp)},
      {"ep", num(l.ep)}, {"sp", l.sp ? "1" : "0"}, {"seq", num(w.facts.seq)}, {"micro_batch", num(l.micro_batch)},
      {"scale", num(l.scale)}, {"layers", num(w.facts.layers_total)}, {"dtype", to_string(l.dtype)}};
  for (const auto& [c, v] : cells)
    if (!t.has_column(c)) return false;
  std::optional<std::size_t> row;
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    if (t.get_string(r, "status") != "ok") continue;
    bool same = true;
    for (const auto& [c, v] : cells) same = same && t.get_string(r, c) == v;
    if (same) row = r;  // the last such row: the latest run
  }
  if (!row) return false;
  std::set<std::string> ran;
  std::stringstream roles(t.get_string(*row, "roles_run"));
  for (std::string r; std::getline(roles, r, '+');) ran.insert(r);
  double predicted = 0;
  for (const auto& op : p.document["ops"])
    if (ran.count(op["op_role"].get<std::string>())) predicted += op["time_s_per_step"].get<double>();
  const double measured = t.get_double(*row, "time_us_median") * 1e-6;
  p.document["measured_step"] = {
      {"csv", step_csv},
      {"line", t.line_of(*row)},
      {"point", t.get_string(*row, "point")},
      {"time_s_median", measured},
      {"p10_s", t.get_double(*row, "time_us_p10") * 1e-6},
      {"p90_s", t.get_double(*row, "time_us_p90") * 1e-6},
      {"samples", t.get_int(*row, "samples")},
      {"roles_skipped", t.get_string(*row, "roles_skipped")},
      {"predicted_s", predicted},
      {"predicted_rule", "the sum over the operations bench_step ran of time per call x calls_per_step (no overlap, "
                         "no bubble: the sequence runs them back to back)"},
      {"predicted_over_measured", predicted / measured}};
  return true;
}

}  // namespace gpucal::predict
