#include "app/export/workload_refit.h"

#include <algorithm>
#include <functional>

#include "app/common/number_text.h"
#include "app/export/tool_formulas.h"
#include "app/export/workload_fit.h"

namespace gpucal::calibration {

using nlohmann::json;
namespace tf = tool_formulas;

namespace {

// The tool's time of one operation from its fields.
using ToolTime = std::function<double(const json& fields, const StepOp& op)>;

// Which fields one fit writes, from a latency and one slope per key (seconds per unit of work).
struct FieldFit {
  std::function<std::size_t(const StepOp&)> key = [](const StepOp&) { return std::size_t{0}; };
  std::function<void(json& fields, double latency, const std::vector<double>& slopes)> set;
  bool with_latency = true;
  double latency_guess = 0;
  std::vector<double> slope_guess;
};

// Fits the fields to `ops` (share-weighted) and writes them into `fields`; nothing without ops.
void fit_into(json& fields, const std::vector<const StepOp*>& ops, const ToolTime& tool, const FieldFit& f) {
  if (ops.empty()) return;
  json scratch = fields;
  std::vector<FitTerm> terms;
  for (const StepOp* op : ops) {
    const std::size_t key = f.key(*op);
    terms.push_back({.weight = op->share, .ours_s = op->ours_s, .key = key,
                     .tool_s = [&scratch, &f, &tool, op, key](double latency, double slope) {
                       std::vector<double> slopes = f.slope_guess;
                       slopes[key] = slope;
                       f.set(scratch, latency, slopes);
                       return tool(scratch, *op);
                     }});
  }
  if (f.with_latency) {
    const LatencySlopes r = fit_latency_slopes(terms, f.latency_guess, f.slope_guess);
    f.set(fields, r.latency, r.slopes);
    return;
  }
  std::vector<double> slopes = f.slope_guess;
  for (std::size_t k = 0; k < slopes.size(); ++k) slopes[k] = fit_slope(terms, k, 0, slopes[k]);
  f.set(fields, 0, slopes);
}

// "name: before -> after unit" for each named number that the fit changed.
void changed_lines(const json& before, const json& after, const std::vector<std::pair<std::string, std::string>>& keys,
                   const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, unit] : keys) {
    const json::json_pointer p(key);
    if (!before.contains(p) || !after.contains(p) || !before[p].is_number()) continue;
    const double b = before[p].get<double>(), a = after[p].get<double>();
    out.push_back(prefix + key.substr(1) + ": " + significant(b, 5) + " -> " + significant(a, 5) +
                  (unit.empty() ? "" : " " + unit) +
                  (b == a ? " (unchanged: no operation of the step uses it)" : ""));
  }
}

void add_rows(const std::vector<const StepOp*>& ops, const std::string& fields, const json& before, const json& after,
              const ToolTime& tool, std::vector<Residual>& rows) {
  for (const StepOp* op : ops) rows.push_back({op, fields, tool(before, *op), tool(after, *op)});
}

bool is_message(const StepOp& op) {
  return op.op.kind == model::OpKind::collective || op.op.kind == model::OpKind::p2p;
}

std::vector<const StepOp*> select(const StepOps& step, const std::function<bool(const StepOp&)>& pick) {
  std::vector<const StepOp*> out;
  for (const StepOp& op : step.ops)
    if (pick(op)) out.push_back(&op);
  return out;
}

void finish(const StepOps& step, const std::vector<std::string>& changed, const std::vector<Residual>& rows,
            ExportReport& report) {
  report.workload_notes = residual_section(step, changed, rows);
  report.notes.push_back("workload-aware fields (--model): share-weighted RMS log error " +
                         significant(residual_rms(rows, false), 5) +
                         " with the reference-shape fields, " + significant(residual_rms(rows, true), 5) +
                         " with the fields written (NOTES.md, Workload-aware fields)");
}

}  // namespace

void refit_nersc(const ExportWorkload& w, int64_t gpn, json& system, ExportReport& report) {
  const auto step = step_ops(w, report.refused);
  if (!step) return;
  const json before = system;
  const ToolTime gemm = [](const json& s, const StepOp& op) { return tf::nersc_gemm_s(s, op.op.gemm); };
  const ToolTime comm = [gpn](const json& s, const StepOp& op) {
    const int64_t n = op.op.comm.group_size;
    const int64_t topology = op.nnodes > 1 ? op.ranks_per_node : std::min(n, std::max<int64_t>(gpn, 1));
    return tf::nersc_comm_s(s, static_cast<double>(op.op.comm.size_bytes), n,
                            tf::nersc_comm_type(op.op.comm.collective), topology);
  };
  const auto gemms = select(*step, [](const StepOp& o) { return o.op.kind == model::OpKind::gemm; });
  auto collective = [](const StepOp& o) {
    return o.op.kind == model::OpKind::collective && o.op.comm.group_size >= 2 &&
           !tf::nersc_comm_type(o.op.comm.collective).empty();
  };
  const auto intra = select(*step, [&](const StepOp& o) { return collective(o) && o.nnodes == 1; });
  const auto inter = select(*step, [&](const StepOp& o) { return collective(o) && o.nnodes > 1; });
  fit_into(system, gemms, gemm,
           {.set = [](json& s, double, const std::vector<double>& k) { s["matrix_flops_fp16"] = 1.0 / k[0]; },
            .with_latency = false,
            .slope_guess = {1.0 / system["matrix_flops_fp16"].get<double>()}});
  fit_into(system, intra, comm,
           {.set =
                [](json& s, double lat, const std::vector<double>& k) {
                  s["nvlink_latency"] = lat;
                  s["nvlink_bandwidth"] = 1.0 / k[0];
                },
            .latency_guess = system["nvlink_latency"].get<double>(),
            .slope_guess = {1.0 / system["nvlink_bandwidth"].get<double>()}});
  fit_into(system, inter, comm,
           {.set =
                [](json& s, double lat, const std::vector<double>& k) {
                  s["ib_latency"] = lat;
                  s["ib_bandwidth"] = 1.0 / k[0];
                },
            .latency_guess = system["ib_latency"].get<double>(),
            .slope_guess = {1.0 / system["ib_bandwidth"].get<double>()}});
  std::vector<std::string> changed;
  changed_lines(before, system,
                {{"/matrix_flops_fp16", "TFLOP/s"},
                 {"/nvlink_latency", "s"},
                 {"/nvlink_bandwidth", "GB/s"},
                 {"/ib_latency", "s"},
                 {"/ib_bandwidth", "GB/s"}},
                "", changed);
  std::vector<Residual> rows;
  add_rows(gemms, "matrix_flops_fp16", before, system, gemm, rows);
  add_rows(intra, "nvlink_*", before, system, comm, rows);
  add_rows(inter, "ib_*, nvlink_*", before, system, comm, rows);
  finish(*step, changed, rows, report);
}

namespace {

// Calculon's ops keys in the fit: all_reduce 0 (its scalar stays 2), all_gather 1,
// reduce_scatter 2, p2p 3.
const std::vector<std::string> kCalculonOps{"all_reduce", "all_gather", "reduce_scatter", "p2p"};

void refit_calculon_tier(json& net, const std::vector<const StepOp*>& ops) {
  const ToolTime time = [](const json& n, const StepOp& op) {
    return tf::calculon_comm_s(n, tf::calculon_op_name(op.op), static_cast<double>(op.op.comm.size_bytes),
                               op.op.comm.group_size);
  };
  bool has_all_reduce = false;
  for (const StepOp* op : ops) has_all_reduce |= tf::calculon_op_name(op->op) == "all_reduce";
  const double bw = net["bandwidth"].get<double>() * 1e9 * net["efficiency"].get<double>();
  std::vector<double> guess;
  for (const auto& name : kCalculonOps) guess.push_back(net["ops"][name][0].get<double>() / bw);
  FieldFit f{.key =
                 [](const StepOp& op) {
                   return static_cast<std::size_t>(
                       std::find(kCalculonOps.begin(), kCalculonOps.end(), tf::calculon_op_name(op.op)) -
                       kCalculonOps.begin());
                 },
             .set =
                 [has_all_reduce, bw](json& n, double lat, const std::vector<double>& k) {
                   n["latency"] = lat;
                   // s per byte -> scalar: bandwidth from all_reduce's slope (scalar 2) when it runs.
                   const double new_bw = has_all_reduce ? 2.0 / k[0] : bw;
                   n["bandwidth"] = new_bw / 1e9 / n["efficiency"].get<double>();
                   for (std::size_t i = 1; i < kCalculonOps.size(); ++i) n["ops"][kCalculonOps[i]][0] = k[i] * new_bw;
                 },
             .latency_guess = net["latency"].get<double>(),
             .slope_guess = guess};
  fit_into(net, ops, time, f);
}

}  // namespace

void refit_calculon(const ExportWorkload& w, json& system, ExportReport& report) {
  const auto step = step_ops(w, report.refused);
  if (!step) return;
  const json before = system;
  const ToolTime time = [](const json& net, const StepOp& op) {
    return tf::calculon_comm_s(net, tf::calculon_op_name(op.op), static_cast<double>(op.op.comm.size_bytes),
                               op.op.comm.group_size);
  };
  std::vector<std::string> changed;
  std::vector<Residual> rows;
  for (std::size_t t = 0; t < system["networks"].size() && t < 2; ++t) {
    const auto ops = select(*step, [t](const StepOp& o) {
      return is_message(o) && o.op.comm.group_size >= 2 && !tf::calculon_op_name(o.op).empty() &&
             (o.nnodes > 1) == (t == 1);
    });
    json& net = system["networks"][t];
    refit_calculon_tier(net, ops);
    const std::string name = "networks[" + std::to_string(t) + "]";
    changed_lines(before["networks"][t], net,
                  {{"/latency", "s"},
                   {"/bandwidth", "GB/s"},
                   {"/ops/all_gather/0", ""},
                   {"/ops/reduce_scatter/0", ""},
                   {"/ops/p2p/0", ""}},
                  name + ".", changed);
    add_rows(ops, name, before["networks"][t], net, time, rows);
  }
  finish(*step, changed, rows, report);
}

void refit_astrasim(const ExportWorkload& w, AstraSimFields& fields, ExportReport& report) {
  const auto step = step_ops(w, report.refused);
  if (!step) return;
  json f{{"peak-perf", fields.peak_tflops},
         {"dimension 0 bandwidth", fields.link_gbps},
         {"dimension 0 latency", fields.hop_latency_ns},
         {"local-mem-bw", fields.local_mem_gbps}};
  const json before = f;
  const ToolTime gemm = [](const json& s, const StepOp& op) { return tf::astrasim_gemm_s(s["peak-perf"], op.op.flops()); };
  const ToolTime comm = [](const json& s, const StepOp& op) {
    return tf::astrasim_collective_s(s["dimension 0 bandwidth"].get<double>() * 1e9 / kGiB, s["dimension 0 latency"],
                                     s["local-mem-bw"], op.op.comm.collective,
                                     static_cast<double>(op.op.comm.size_bytes), op.op.comm.group_size);
  };
  const auto gemms = select(*step, [](const StepOp& o) { return o.op.kind == model::OpKind::gemm; });
  const auto intra = select(*step, [](const StepOp& o) {
    const auto& c = o.op.comm.collective;
    return o.op.kind == model::OpKind::collective && o.nnodes == 1 && o.op.comm.group_size >= 2 &&
           (c == "allreduce" || c == "allgather" || c == "reduce_scatter" || c == "alltoall");
  });
  fit_into(f, gemms, gemm,
           {.set = [](json& s, double, const std::vector<double>& k) { s["peak-perf"] = 1.0 / k[0]; },
            .with_latency = false,
            .slope_guess = {1.0 / fields.peak_tflops}});
  fit_into(f, intra, comm,
           {.set =
                [](json& s, double lat, const std::vector<double>& k) {
                  s["dimension 0 latency"] = lat;
                  s["dimension 0 bandwidth"] = 1.0 / k[0];
                },
            .latency_guess = fields.hop_latency_ns,
            .slope_guess = {1.0 / fields.link_gbps}});
  fields.peak_tflops = f["peak-perf"];
  fields.link_gbps = f["dimension 0 bandwidth"];
  fields.hop_latency_ns = f["dimension 0 latency"];
  std::vector<std::string> changed;
  changed_lines(before, f,
                {{"/peak-perf", "TFLOP/s"}, {"/dimension 0 bandwidth", "GB/s per link"}, {"/dimension 0 latency", "ns per hop"}},
                "", changed);
  std::vector<Residual> rows;
  add_rows(gemms, "peak-perf", before, f, gemm, rows);
  add_rows(intra, "dimension 0", before, f, comm, rows);
  finish(*step, changed, rows, report);
}

void refit_vtrain(const ExportWorkload& w, json& config, ExportReport& report) {
  const auto step = step_ops(w, report.refused);
  if (!step) return;
  const json before = config;
  std::vector<std::string> changed;
  std::vector<Residual> rows;
  for (const bool inter : {false, true}) {
    const std::string key = inter ? "inter_node_bandwidth" : "intra_node_bandwidth";
    if (!config.contains(key)) continue;
    const auto ops = select(*step, [inter](const StepOp& o) {
      return o.op.kind == model::OpKind::collective && o.op.comm.collective == "allreduce" &&
             o.op.comm.group_size >= 2 && (o.nnodes > 1) == inter;
    });
    const ToolTime time = [key, inter](const json& c, const StepOp& op) {
      return tf::vtrain_allreduce_s(c[key], inter, static_cast<double>(op.op.comm.size_bytes), op.op.comm.group_size);
    };
    fit_into(config, ops, time,
             {.set = [key](json& c, double, const std::vector<double>& k) { c[key] = 1.0 / k[0]; },
              .with_latency = false,
              .slope_guess = {1.0 / config[key].get<double>()}});
    changed_lines(before, config, {{"/" + key, inter ? "Gbit/s (2^30)" : "GiB/s"}}, "", changed);
    add_rows(ops, key, before, config, time, rows);
  }
  finish(*step, changed, rows, report);
}

}  // namespace gpucal::calibration
