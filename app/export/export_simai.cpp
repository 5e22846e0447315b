// SimAI's workload and busbw.yaml (gpucal export --to simai --model ...), read as SimAI's
// parser reads them (aliyun/SimAI astra-sim-alibabacloud/astra-sim/workload/Workload.cc
// initialize_workload, Layer.cc):
//   line 1  the policy: HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: <tp> ep: <ep>
//           pp: <pp> vpp: <chunks> ga: <micro-batches> all_gpus: <world> checkpoints: 0
//           checkpoint_initiates: 0 [pp_comm: <bytes of one pipeline message>, when pp > 1]
//   line 2  the number of lines that follow
//   then    name, dependency (-1), forward compute (ns), forward collective and size,
//           input-gradient compute (ns), collective and size, weight-gradient compute (ns),
//           collective and size, update time (ns): whitespace-separated.
// Collective names: ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL; in the forward and
// input-gradient columns plain means the TP group and _EP the EP group; in the weight-gradient
// column plain means DP and _DP_EP the expert-DP group (DP / EP ranks). Sizes are nccl-tests' S.
// SimAI runs the lines forward, then backward from the last (per line: input-gradient compute
// and collective, weight-gradient compute, its collective without blocking).
// The lines are the step of the stage gpucal predict derives (--pp-stage, default the last):
// the gradient reductions, parameter all-gathers and optimizer first (SimAI reaches them last
// going backward), then per micro-batch the embedding, the layers and the output, a layer
// taking as many lines as its most collectives in one direction.
// busbw.yaml (its title line, then TP, DP, EP: allreduce / allgather / reducescatter / alltoall,
// PP: busbw) holds, per group and collective, the bus bandwidth that gives the step's operations
// of that kind the total time gpucal predict gives them: sum(S x bus factor) / sum(time). SimAI
// divides bytes by 2^30 before dividing by these, so they are written in GiB/s.
#include <cmath>
#include <map>
#include <sstream>

#include "app/export/export_common.h"
#include "app/export/export_workload.h"
#include "core/formulas/collective_formulas.h"

namespace gpucal::calibration {

using model::ModelOp;
using model::OpKind;
using nlohmann::json;

namespace {

struct Collective {
  std::string type = "NONE";
  int64_t size = 0;
};

struct Line {
  std::string name;
  double fwd_ns = 0, ig_ns = 0, wg_ns = 0;
  Collective fwd, ig, wg;
};

// Forward and backward of one layer (or the embedding, or the output) in one micro-batch.
struct Block {
  std::string name;
  double fwd_ns = 0, ig_ns = 0, wg_ns = 0;
  std::vector<Collective> fwd, ig;
};

std::string base_type(const std::string& collective) {
  if (collective == "allreduce") return "ALLREDUCE";
  if (collective == "allgather") return "ALLGATHER";
  if (collective == "reduce_scatter") return "REDUCESCATTER";
  return "ALLTOALL";
}

// The collective's name in a forward / input-gradient column (TP or EP group) or the
// weight-gradient column (DP or expert DP); "" where SimAI's column cannot hold its group.
std::string column_type(const ModelOp& op, bool weight_gradient) {
  const std::string& g = op.comm.group;
  const std::string base = base_type(op.comm.collective);
  if (!weight_gradient) return g == "tp" || g == "embedding" ? base : g == "ep" ? base + "_EP" : "";
  return g == "dp" ? base : g == "expert_dp" ? base + "_DP_EP" : "";
}

bool ends_with(const std::string& s, const char* p) {
  const std::string q(p);
  return s.size() >= q.size() && s.compare(s.size() - q.size(), q.size(), q) == 0;
}

// The per-step lines: gradient reductions and parameter all-gathers (weight-gradient column),
// the other per-step messages (input-gradient column), the gradient norm and optimizer.
void step_lines(const StageProgram& p, std::vector<Line>& lines) {
  double optimizer_ns = 0;
  for (const ProgramNode& n : p.nodes) {
    const ProgramOp& pop = p.ops[n.op];
    const ModelOp& op = pop.op;
    const bool per_step = predict::per_step(op);
    if (!per_step && !predict::dp_gradient_reduction(op)) continue;
    if (op.kind != OpKind::collective) {
      optimizer_ns += pop.time_us * 1e3;
      continue;
    }
    Line l;
    l.name = op.role;
    const std::string wg = column_type(op, true);
    Collective& column = wg.empty() ? l.ig : l.wg;
    column.type = wg.empty() ? column_type(op, false) : wg;
    column.size = op.comm.size_bytes;
    lines.push_back(l);
  }
  if (optimizer_ns > 0) {
    Line l;
    l.name = "optimizer";
    l.wg_ns = optimizer_ns;
    lines.push_back(l);
  }
}

// The per-micro-batch blocks, in forward order.
std::vector<Block> blocks_of(const StageProgram& p) {
  std::vector<Block> blocks;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::size_t> index;  // (mb, chunk, layer or -1/-2)
  std::map<std::tuple<int64_t, int64_t, bool>, bool> seen_layer;       // (mb, chunk, backward)
  for (const ProgramNode& n : p.nodes) {
    const ProgramOp& pop = p.ops[n.op];
    const ModelOp& op = pop.op;
    if (n.micro_batch < 0 || op.comm.group == "pp" || predict::dp_gradient_reduction(op)) continue;
    bool& seen = seen_layer[{n.micro_batch, n.chunk, n.backward}];
    if (n.layer >= 0) seen = true;
    // Outside the layers: the embedding before them going forward (after them going backward).
    const bool embedding = n.layer < 0 && seen == n.backward;
    const int64_t key_layer = n.layer >= 0 ? n.layer : embedding ? -1 : -2;
    const auto key = std::make_tuple(n.micro_batch, n.chunk, key_layer);
    auto it = index.find(key);
    if (it == index.end()) {
      const std::string where = key_layer >= 0 ? "layer" + std::to_string(key_layer) : embedding ? "embedding" : "output";
      blocks.emplace_back();
      blocks.back().name = "mb" + std::to_string(n.micro_batch) + "_" + where;
      it = index.emplace(key, blocks.size() - 1).first;
    }
    Block& b = blocks[it->second];
    if (op.kind == OpKind::collective) {
      Collective c;
      c.type = column_type(op, false);
      c.size = op.comm.size_bytes;
      (n.backward ? b.ig : b.fwd).push_back(c);
      continue;
    }
    const double ns = pop.time_us * 1e3;
    (!n.backward ? b.fwd_ns : ends_with(op.role, "_wgrad") ? b.wg_ns : b.ig_ns) += ns;
  }
  return blocks;
}

// A block's lines: compute split evenly over them; the backward's collectives placed from the
// last line up (SimAI runs the lines backward from the last).
void block_lines(const Block& b, std::vector<Line>& lines) {
  const std::size_t k = std::max<std::size_t>({b.fwd.size(), b.ig.size(), 1});
  for (std::size_t i = 0; i < k; ++i) {
    Line l;  // (no designated initializer: GCC 12 leaves the Collective members unconstructed)
    l.name = b.name + (k > 1 ? "_" + std::to_string(i) : "");
    l.fwd_ns = b.fwd_ns / static_cast<double>(k);
    l.ig_ns = b.ig_ns / static_cast<double>(k);
    l.wg_ns = b.wg_ns / static_cast<double>(k);
    if (i < b.fwd.size()) l.fwd = b.fwd[i];
    if (k - 1 - i < b.ig.size()) l.ig = b.ig[k - 1 - i];
    lines.push_back(l);
  }
}

std::string workload_text(const ExportWorkload& w, const StageProgram& p, const std::vector<Line>& lines) {
  const auto& l = w.layout;
  std::ostringstream s;
  s << "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: " << l.tp << " ep: " << l.ep << " pp: " << l.pp
    << " vpp: " << p.chunks << " ga: " << p.workload.facts.micro_batches << " all_gpus: " << l.world()
    << " checkpoints: 0 checkpoint_initiates: 0";
  for (const ProgramOp& op : p.ops)
    if (op.op.comm.group == "pp") {
      s << " pp_comm: " << op.op.comm.size_bytes;
      break;
    }
  s << "\n" << lines.size() << "\n";
  CarriedRounder fwd, ig, wg;  // whole nanoseconds per column (export_workload.h)
  for (const Line& line : lines)
    s << line.name << "\t-1\t" << fwd.next(line.fwd_ns) << "\t" << line.fwd.type << "\t" << line.fwd.size << "\t"
      << ig.next(line.ig_ns) << "\t" << line.ig.type << "\t" << line.ig.size << "\t" << wg.next(line.wg_ns) << "\t"
      << line.wg.type << "\t" << line.wg.size << "\t0\n";
  return s.str();
}

// busbw.yaml: per SimAI key, sum(S x factor) and sum(time) over the stage's operations.
std::string busbw_yaml(const StageProgram& p, const std::string& title) {
  std::map<std::string, std::pair<double, double>> by_key;  // "TP.allreduce" -> (bus bytes, seconds)
  for (const ProgramOp& pop : p.ops) {
    const ModelOp& op = pop.op;
    if (op.kind != OpKind::collective && op.comm.group != "pp") continue;
    const double calls = static_cast<double>(op.calls_per_step), t = pop.time_us * 1e-6 * calls;
    const double s = static_cast<double>(op.comm.size_bytes) * calls;
    const std::string& g = op.comm.group;
    if (g == "pp") {
      by_key["PP.busbw"].first += s, by_key["PP.busbw"].second += t;
      continue;
    }
    // SimAI's keys: EP.alltoall is the EP group's; EP's others the expert-DP group's; one value
    // serves allgather and reducescatter (and DP's alltoall).
    const std::string& c = op.comm.collective;
    const std::string section = g == "tp" || g == "embedding" ? "TP" : g == "dp" ? "DP" : "EP";
    const std::string kind = c == "allreduce"                                  ? "allreduce"
                             : c == "alltoall" && (g == "ep" || section == "TP") ? "alltoall"
                                                                               : "allgather";
    const std::string key = section + "." + kind;
    by_key[key].first += s * bus_factor(c, static_cast<int>(op.comm.group_size));
    by_key[key].second += t;
  }
  auto value = [&](const std::string& key) {
    const auto it = by_key.find(key);
    if (it == by_key.end() || !(it->second.second > 0)) return std::string("null");
    return format_number(it->second.first / it->second.second / (1024.0 * 1024.0 * 1024.0));
  };
  std::ostringstream y;
  y << title << "\n";
  for (const char* section : {"TP", "DP", "EP"}) {
    const std::string sec(section);
    y << sec << ":\n"
      << "allreduce,: " << value(sec + ".allreduce") << "\n"
      << "allgather,: " << value(sec + ".allgather") << "\n"
      << "reducescatter,: " << value(sec + ".allgather") << "\n"
      << "alltoall,: " << value(sec + ".alltoall") << "\n";
  }
  y << "PP:\nbusbw: " << value("PP.busbw") << "\n";
  return y.str();
}

}  // namespace

ExportReport export_simai(const json&, const ExportSettings& settings, const std::string& out_dir) {
  ExportReport report;
  report.consumer = "simai";
  const ExportWorkload* w = settings.workload();
  if (!w) {
    report.refused.push_back("the step: --to simai needs --model NAME or --model-config FILE (and the layout flags)");
    return report;
  }
  if (w->layout.cp > 1)
    report.refused.push_back("--cp " + std::to_string(w->layout.cp) +
                             ": SimAI's workload has no context-parallel group (its collectives run in TP, EP, "
                             "DP or expert-DP groups)");
  if (w->layout.zero == 3)
    report.refused.push_back("--zero 3: ZeRO-3's gathers run in the DP group during forward and backward, where "
                             "SimAI's columns take TP or EP collectives only");
  if (!report.ok()) return report;
  const std::vector<StageProgram> programs = stage_programs(*w, report);
  if (!report.ok()) return report;
  const int64_t stage = w->layout.pp_stage < 0 ? w->layout.pp - 1 : w->layout.pp_stage;
  const StageProgram& p = programs.at(static_cast<std::size_t>(stage));
  std::vector<Line> lines;
  step_lines(p, lines);
  for (const Block& b : blocks_of(p)) block_lines(b, lines);
  const std::string description = describe_step(*w, p.workload);
  const predict::Breakdown b = predicted_breakdown(*w, p, pipeline_times(*w, programs));
  report.notes.push_back("the step: " + description + "; the lines are pipeline stage " + std::to_string(stage) +
                         "'s (--pp-stage), " + std::to_string(lines.size()) + " lines");
  report.notes.push_back("gpucal predict's step time for it: " + format_number(b.step_s * 1e3) +
                         " ms; SimAI-Analytical's total = compute + exposed collectives + bubble (pp - 1) / (ga x "
                         "vpp) x (the lines' compute and forward/input-gradient collectives) + 2 x vpp x ga "
                         "pipeline messages at PP busbw: predict's form when the stages are equal (predict prices "
                         "the bubble from every stage, SimAI from this one)");
  report.notes.push_back("busbw.yaml: per group and collective, sum(S x bus factor) / sum(time) of the step's "
                         "operations of that kind, in GiB/s (SimAI divides bytes by 2^30); EP's allreduce and "
                         "allgather are the expert-DP group's, its alltoall the EP group's");
  report.assumed.push_back("SimAI's own rules: a collective between 1 B and 1 MiB takes a fixed time by group size "
                           "(10 us at 2 ranks), a forward collective under 4096 B counts as 4096 B; the current "
                           "SimAI-Analytical binary computes busbw from -nv/-nic/-n_p_s and no longer reads "
                           "busbw.yaml (-busbw), earlier ones do");
  report.assumed.push_back("the embedding gradient all-reduce (first and last stage) and the sequence-parallel "
                           "norm-gradient all-reduce sit in the input-gradient column, which SimAI times over the TP "
                           "group; the optimizer's time is a weight-gradient compute, which SimAI counts in its "
                           "bubble base");
  write_export(report, out_dir,
               {{"workload.txt", workload_text(*w, p, lines)},
                {"busbw.yaml", busbw_yaml(p, "gpucal export --to simai: " + description)}});
  return report;
}

}  // namespace gpucal::calibration
