// Chakra execution traces for ASTRA-sim (gpucal export --to chakra --model ...): out/chakra/
// workload.<rank>.et for every rank of the layout (app/export/chakra_trace.h: the nodes and the
// attributes ASTRA-sim reads) and comm_group.json, the communicator groups {"<id>": [ranks]}
// ASTRA-sim reads with --comm-group-configuration (astra-sim/workload/Workload.cc
// initialize_comm_groups; a node's pg_name is its group's id). The step's order and
// dependencies are app/export/step_program.h's; each compute node's time is the one
// `gpucal predict` gives the operation.
// ASTRA-sim replays duration_micros when its system.json has "roofline-enabled": 0; with 1 (what
// gpucal export --to astrasim writes) it times compute nodes by its roofline from num_ops and
// tensor_size instead. A subgroup's collectives run as a ring over the group's NPUs
// (astra-sim/system/CommunicatorGroup.cc); a group of every NPU uses system.json's algorithms.
#include <cstdio>
#include <filesystem>
#include <map>

#include "app/export/chakra_trace.h"
#include "app/export/export_common.h"
#include "app/export/export_workload.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

std::string ms(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  return buf;
}

// operations.tsv: one row per operation of each stage: the nodes it makes per rank, its time
// per call, where that came from.
std::string operations_table(const std::vector<StageProgram>& programs) {
  std::string out = "stage\trole\tnodes_per_rank\ttime_us_per_call\tprovenance\tmethod\n";
  for (const StageProgram& p : programs) {
    std::map<std::size_t, int64_t> calls;
    for (const auto& n : p.nodes)
      if (n.kind != ProgramNode::Kind::recv) ++calls[n.op];
    for (const auto& [i, count] : calls) {
      const ProgramOp& op = p.ops[i];
      out += std::to_string(p.workload.facts.stage) + "\t" + op.op.role + "\t" + std::to_string(count) + "\t" +
             format_number(op.time_us) + "\t" + op.provenance + "\t" + op.method + "\n";
    }
  }
  return out;
}

}  // namespace

ExportReport export_chakra(const json&, const ExportSettings& settings, const std::string& out_dir) {
  ExportReport report;
  report.consumer = "chakra";
  const ExportWorkload* w = settings.workload();
  if (!w) {
    report.refused.push_back("the step: --to chakra needs --model NAME or --model-config FILE (and the layout flags)");
    return report;
  }
  const std::vector<StageProgram> programs = stage_programs(*w, report);
  if (!report.ok()) return report;
  RankLayout ranks(w->layout);
  const int64_t rpn = w->options.cost.ranks_per_node;
  const TraceShape shape{.ranks_per_node = rpn, .network_dims = ranks.world() > rpn ? 2 : 1};
  const std::string description = describe_step(*w, programs.back().workload);
  const std::string dir = ensure_dir(out_dir, report.consumer);
  for (int64_t rank = 0; rank < ranks.world(); ++rank) {
    const std::string path = (std::filesystem::path(dir) / ("workload." + std::to_string(rank) + ".et")).string();
    write_text_file(path, chakra_trace(programs[ranks.position(rank).pp], rank, ranks, shape, description));
    report.files_written.push_back(path);
  }
  report.notes.push_back("the step: " + description);
  const std::vector<predict::StageTime> pipeline = pipeline_times(*w, programs);
  for (const StageProgram& p : programs) {
    const predict::Breakdown b = predicted_breakdown(*w, p, pipeline);
    report.notes.push_back("stage " + std::to_string(p.workload.facts.stage) + ": " +
                           std::to_string(p.nodes.size()) + " nodes per rank; gpucal predict's step time " +
                           ms(b.step_s) + " (compute " + ms(b.gemm_s + b.attention_s + b.memory_s) + ", bubble " +
                           ms(b.bubble_s) + ")");
    for (const auto& role : p.added_roles)
      report.notes.push_back("stage " + std::to_string(p.workload.facts.stage) + ": " + role +
                             " added: the interleaved schedule's first stage receives from the last (gpucal "
                             "predict counts one pipeline message per micro-batch and direction)");
  }
  report.notes.push_back("ASTRA-sim: --workload-configuration=" + dir + "/workload --comm-group-configuration=" + dir +
                         "/comm_group.json, with a network of " + std::to_string(ranks.world()) +
                         " NPUs (gpucal export --to astrasim, --set gpus_per_node and nodes)");
  report.notes.push_back("comm_size: all-gather the per-rank input (S / n), the others nccl-tests' S; pg_name the "
                         "group's id in comm_group.json");
  report.assumed.push_back(
      "compute nodes carry duration_micros (replayed by ASTRA-sim with \"roofline-enabled\": 0 in system.json) "
      "and num_ops / tensor_size (its roofline, with \"roofline-enabled\": 1)");
  report.assumed.push_back("ranks in Megatron-LM's order: tp fastest, then cp, dp, pp; " + std::to_string(rpn) +
                           " ranks per node (--ranks-per-node) for involved_dim");
  report.notes.push_back("operations.tsv: each operation's nodes per rank, time per call, provenance and method");
  write_export(report, out_dir,
               {{"comm_group.json", ranks.groups_json().dump(2) + "\n"}, {"operations.tsv", operations_table(programs)}});
  return report;
}

}  // namespace gpucal::calibration
