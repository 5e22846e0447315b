#include "app/export/export_workload.h"

#include <sstream>

#include "app/predict/op_cost.h"

namespace gpucal::calibration {

std::vector<StageProgram> stage_programs(const ExportWorkload& w, ExportReport& report) {
  const predict::OpCoster coster(w.results, w.calibration, w.options.cost);
  std::vector<StageProgram> programs;
  std::vector<std::string> left_out;
  for (int64_t stage = 0; stage < w.layout.pp; ++stage) {
    model::ParallelLayout l = w.layout;
    l.pp_stage = stage;
    model::Workload workload = model::derive_workload(w.spec, l);
    std::vector<ProgramOp> ops;
    for (const model::ModelOp& op : workload.ops) {
      std::string why;
      const auto cost = coster.cost(op, workload.layout, why);
      if (!cost) {
        (w.options.allow_missing ? left_out : report.refused)
            .push_back("stage " + std::to_string(stage) + ": " + op.bench() + " " + op.role + " (" + op.shape_text() +
                       "): " + why);
        continue;
      }
      ops.push_back({.op = op, .time_us = cost->time_us, .provenance = to_string(cost->provenance),
                     .method = cost->method});
    }
    if (report.refused.empty())
      programs.push_back(build_stage_program(std::move(workload), std::move(ops), w.options.overlap,
                                             w.options.schedule));
  }
  if (!report.refused.empty()) programs.clear();
  if (!left_out.empty()) {
    report.lead = "INCOMPLETE: " + std::to_string(left_out.size()) +
                  " operation(s) left out (--allow-missing): the traces lack them, so a simulated step is shorter "
                  "than the step they stand for";
    for (const auto& op : left_out) report.notes.push_back("left out (--allow-missing): " + op);
  }
  return programs;
}

std::string describe_step(const ExportWorkload& w, const model::Workload& stage) {
  const auto& l = stage.layout;
  std::ostringstream s;
  s << stage.model.name << " (scale " << l.scale << ", " << stage.facts.layers_total << " layers), tp " << l.tp
    << " pp " << l.pp << " dp " << l.dp << " cp " << l.cp << " ep " << l.ep << (l.sp ? " sp" : "") << ", zero "
    << l.zero << ", seq " << stage.facts.seq << ", micro-batch " << l.micro_batch << ", "
    << stage.facts.micro_batches << " micro-batch(es) per step, " << to_string(l.dtype)
    << (l.fp8_gemms ? " (linear GEMMs fp8_e4m3)" : "") << "; overlap "
    << predict::to_string(w.options.overlap) << ", schedule " << w.options.schedule.name;
  if (w.options.schedule.name == "interleaved") s << " (" << w.options.schedule.virtual_stages << " chunks)";
  return s.str();
}

namespace {
// The stage's derived operations: the interleaved schedule's added messages come last.
std::vector<predict::CostedOp> costed_ops(const StageProgram& stage) {
  std::vector<predict::CostedOp> costed;
  const std::size_t derived = stage.ops.size() - stage.added_roles.size();
  for (std::size_t i = 0; i < derived; ++i) costed.push_back({&stage.ops[i].op, stage.ops[i].time_us});
  return costed;
}
}  // namespace

std::vector<predict::StageTime> pipeline_times(const ExportWorkload& w, const std::vector<StageProgram>& programs) {
  const auto& o = w.options;
  std::vector<predict::StageTime> pipeline;
  if (programs.size() > 1)
    for (const StageProgram& p : programs)
      pipeline.push_back(
          predict::stage_time(predict::compute_breakdown(costed_ops(p), p.workload, o.overlap, o.schedule, 0)));
  return pipeline;
}

predict::Breakdown predicted_breakdown(const ExportWorkload& w, const StageProgram& stage,
                                       const std::vector<predict::StageTime>& pipeline) {
  const auto& o = w.options;
  return predict::compute_breakdown(costed_ops(stage), stage.workload, o.overlap, o.schedule, 0, pipeline);
}

}  // namespace gpucal::calibration
