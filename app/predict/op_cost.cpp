#include "app/predict/op_cost.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/formulas/kernel_table.h"
#include "app/common/calibration_schema.h"
#include "app/fit/comm_forms.h"
#include "app/fit/comm_interval.h"
#include "app/fit/compute_tables.h"
#include "app/fit/gemm_surface.h"
#include "core/output/row.h"

namespace gpucal::predict {

using nlohmann::json;
using model::ModelOp;
using model::OpKind;

namespace {
std::string fmt(double v) { return format_number(v); }

bool contains_role(const std::string& roles, const std::string& role) {
  std::stringstream s(roles);
  std::string r;
  while (std::getline(s, r, '+'))
    if (r == role) return true;
  return false;
}

Provenance inside_or_not(bool inside) { return inside ? Provenance::interpolated : Provenance::extrapolated; }

const json kNone;

// An fp8 GEMM priced from a figure measured with the other accumulation on Hopper (GemmShape::accumulation,
// compute_tables.h's fp8_accumulation_of): split accumulation (FP32 promotion) costs 1.10-1.20x
// the fast mode's time at training shapes on H100 (a user's benchmark posted to pytorch/ao, and
// the maintainers' answer that fast accumulation trades accuracy for speed). The time is scaled by
// the middle of that range and the interval widened to its ends; the figure is then extrapolated.
constexpr double kSplitAccumulation = 1.15, kSplitAccumulationLo = 1.10, kSplitAccumulationHi = 1.20;

void price_accumulation(OpCost& c, const std::string& wanted, const std::string& had) {
  if (wanted.empty() || had.empty() || wanted == had) return;
  const bool slower = wanted == "split";
  const double f = slower ? kSplitAccumulation : 1.0 / kSplitAccumulation;
  const double lo = slower ? kSplitAccumulationLo : 1.0 / kSplitAccumulationHi;
  const double hi = slower ? kSplitAccumulationHi : 1.0 / kSplitAccumulationLo;
  if (!c.has_interval) c.lo_us = c.hi_us = c.time_us;
  c.lo_us *= lo;
  c.hi_us *= hi;
  c.time_us *= f;
  c.has_interval = true;
  c.interval_rule = (c.interval_rule.empty() || c.interval_rule.rfind("none", 0) == 0 ? std::string() : c.interval_rule + "; ") +
                    "x" + fmt(lo) + "..x" + fmt(hi) + " for the accumulation";
  c.method += "; x" + fmt(f) + ": measured with " + had + " accumulation, run with " + wanted +
              " (Transformer Engine: fast forward, split dgrad and wgrad)";
  c.provenance = Provenance::extrapolated;
}
}  // namespace

double interpolate_log2(const std::vector<std::pair<double, double>>& xy, double x, bool& inside) {
  inside = !xy.empty() && x >= xy.front().first && x <= xy.back().first;
  if (xy.empty()) return 0;
  if (x <= xy.front().first) return xy.front().second;
  if (x >= xy.back().first) return xy.back().second;
  for (std::size_t i = 1; i < xy.size(); ++i) {
    if (x > xy[i].first) continue;
    const double x0 = std::log2(xy[i - 1].first), x1 = std::log2(xy[i].first);
    const double w = x1 > x0 ? (std::log2(x) - x0) / (x1 - x0) : 0;
    return xy[i - 1].second + w * (xy[i].second - xy[i - 1].second);
  }
  return xy.back().second;
}

int64_t group_nnodes(const std::string& group, int64_t group_size, const model::ParallelLayout& l,
                     int64_t ranks_per_node) {
  int64_t stride = 1;  // Megatron order: tp, cp, (ep within) dp, pp
  if (group == "cp" || group == "ep") stride = l.tp;
  if (group == "dp" || group == "expert_dp") stride = l.tp * l.cp;
  // The gradients' group is dp x cp (StepFacts::dp_group): at one tp rank, the cp and dp ranks
  // together, contiguous at stride tp.
  if (group == "dp" && l.cp > 1 && group_size == l.dp * l.cp) stride = l.tp;
  if (group == "pp" || group == "embedding") stride = l.tp * l.cp * l.dp;
  const int64_t per_node = std::clamp<int64_t>(ranks_per_node / std::max<int64_t>(stride, 1), 1, group_size);
  return (group_size + per_node - 1) / per_node;
}

OpCoster::OpCoster(const calibration::ResultsDir& results, json calibration, CostOptions options)
    : results_(results), calibration_(std::move(calibration)), options_(options) {
  if (calibration_.is_object() && calibration_.contains("communication")) {
    try {
      comm_ = std::make_unique<calibration::CommModel>(calibration_);
    } catch (const std::exception& e) {
      comm_error_ = e.what();
    }
  } else {
    comm_error_ = "no communication section in the calibration";
  }
}
OpCoster::~OpCoster() = default;

std::optional<OpCost> OpCoster::measured(const ModelOp& op, std::string* accumulation) const {
  const calibration::BenchResults* b = results_.find(op.bench());
  if (!b) return std::nullopt;
  const auto& t = b->table;
  const auto cells = op.shape_cells();
  for (const auto& [c, v] : cells)
    if (!t.has_column(c)) return std::nullopt;
  std::optional<std::size_t> best;
  bool best_named = false;
  for (std::size_t r : b->ok_rows) {
    bool same = true;
    for (const auto& [c, v] : cells) same = same && t.get_string(r, c) == v;
    if (!same) continue;
    const bool named = contains_role(t.get_string_or(r, "op_role", ""), op.role);
    const double time = t.get_double(r, "time_us_median");
    if (!best || (named && !best_named) ||
        (named == best_named && time < t.get_double(*best, "time_us_median"))) {
      best = r;
      best_named = named;
    }
  }
  if (!best) return std::nullopt;
  if (accumulation && t.has_column("impl"))
    *accumulation = calibration::fp8_accumulation_of(t.get_string(*best, "impl"), t.get_string_or(*best, "backend", ""),
                                                     t.get_string_or(*best, "device", ""));
  OpCost c;
  c.time_us = t.get_double(*best, "time_us_median");
  c.provenance = Provenance::measured;
  c.method = std::string(best_named ? "the --model run's row for this op" : "a row of the same shape") +
             " (fastest implementation: " + t.get_string(*best, "impl") + ")";
  c.sources.push_back(op.bench() + ".csv:" + std::to_string(t.line_of(*best)) + " " + t.get_string(*best, "point"));
  if (t.has_column("time_us_p10") && t.has_column("time_us_p90")) {
    c.lo_us = std::min(c.time_us, t.get_double(*best, "time_us_p10"));
    c.hi_us = std::max(c.time_us, t.get_double(*best, "time_us_p90"));
    c.has_interval = true;
    c.interval_rule = "the row's p10..p90";
  }
  return c;
}

std::optional<OpCost> OpCoster::from_gemm_table(const ModelOp& op, std::string& why) const {
  const std::string dt = to_string(op.dtype);
  const json* g = calibration_.is_object() ? &calibration_["compute"]["gemm"] : nullptr;
  if (!g || !g->contains(dt)) {
    why = "no gemm row of this shape and no compute.gemm." + dt + " table" + calibration::left_out_as_suspect(calibration_, "gemm");
    return std::nullopt;
  }
  const auto key = std::make_tuple(dt, op.gemm.batch, op.gemm.m, op.gemm.n, op.gemm.k);
  if (const auto hit = gemm_cache_.find(key); hit != gemm_cache_.end()) return hit->second;
  const json& table = (*g)[dt];
  auto [samples, fresh] = gemm_samples_.try_emplace(dt);
  if (fresh) samples->second = calibration::gemm_samples_of(table);
  if (samples->second.empty()) {
    why = "compute.gemm." + dt + " has no measured shape (by_shape)";
    return std::nullopt;
  }
  const calibration::GemmEstimate e =
      calibration::gemm_surface(samples->second, static_cast<double>(std::max<int64_t>(1, op.gemm.batch)),
                                static_cast<double>(op.gemm.m), static_cast<double>(op.gemm.n),
                                static_cast<double>(op.gemm.k));
  OpCost c;
  c.time_us = op.flops() / (e.tflops * 1e12) * 1e6;
  c.provenance = inside_or_not(e.outside_octaves == 0);
  c.method = "flops / " + fmt(e.tflops) + " TFLOP/s (the GEMM surface: " + e.rule +
             (e.outside_octaves > 0 ? ", " + fmt(e.outside_octaves) + " octaves outside the measured shapes" : "") +
             ")";
  c.sources.push_back("calibration compute.gemm." + dt + ".by_shape");
  // The interval: the 90th percentile of the every-3rd held-out shapes' errors, wider by one
  // such width per octave outside the measured shapes.
  const json heldout = table.value("heldout", json::object());
  if (heldout.contains("interval_half_width_pct")) {
    const double half = heldout["interval_half_width_pct"].get<double>() / 100.0 * (1.0 + e.outside_octaves);
    c.has_interval = true;
    c.lo_us = c.time_us / (1.0 + half);
    c.hi_us = c.time_us * (1.0 + half);
    c.interval_rule = "the GEMM surface's 90th-percentile held-out error (" +
                      fmt(heldout["interval_half_width_pct"].get<double>()) + "%)" +
                      (e.outside_octaves > 0 ? ", x" + fmt(1.0 + e.outside_octaves) + " for the octaves outside" : "");
  } else {
    c.interval_rule = "none: compute.gemm." + dt + " has too few shapes to score (6 or more)";
  }
  gemm_cache_.emplace(key, c);
  return c;
}

std::optional<OpCost> OpCoster::from_attention_table(const ModelOp& op, std::string& why) const {
  const auto& a = op.attention;
  const std::string dt = to_string(op.dtype);
  const json* best = nullptr;
  if (calibration_.is_object() && calibration_["compute"].contains("attention")) {
    for (const auto& e : calibration_["compute"]["attention"]) {
      if (e["dtype"] != dt || e["pass"] != a.pass || e["flop_convention"] != "fa2") continue;
      if (e["causal"].get<std::string>() != (a.causal ? "1" : "0")) continue;
      // The nearest head dim (efficiency depends on it far less than on the sequence).
      if (!best || std::abs(e["head_dim"].get<int64_t>() - a.head_dim) <
                       std::abs((*best)["head_dim"].get<int64_t>() - a.head_dim))
        best = &e;
    }
  }
  if (!best) {
    why = "no attention row of this shape and no compute.attention entry for " + dt + " " + a.pass +
          (a.causal ? " causal" : " non-causal") + " (fa2)";
    return std::nullopt;
  }
  std::vector<std::pair<double, double>> seq_tflops;
  for (const auto& s : (*best)["by_seq"]) seq_tflops.emplace_back(s["seq_kv"].get<double>(), s["tflops"].get<double>());
  std::sort(seq_tflops.begin(), seq_tflops.end());
  bool inside = false;
  const double tflops = interpolate_log2(seq_tflops, static_cast<double>(a.seq_kv), inside);
  if (!(tflops > 0)) {
    why = "compute.attention entry without throughput";
    return std::nullopt;
  }
  const bool same_dim = (*best)["head_dim"].get<int64_t>() == a.head_dim;
  OpCost c;
  c.time_us = op.flops() / (tflops * 1e12) * 1e6;
  c.provenance = inside && same_dim ? Provenance::interpolated : Provenance::extrapolated;
  c.method = "fa2 flops / " + fmt(tflops) + " TFLOP/s (by_seq at seq_kv " + std::to_string(a.seq_kv) +
             ", head_dim " + (*best)["head_dim"].dump() + ")";
  c.sources.push_back("calibration compute.attention[" + dt + " " + a.pass + " head_dim " +
                      (*best)["head_dim"].dump() + "].by_seq");
  return c;
}

std::optional<OpCost> OpCoster::from_memory_table(const ModelOp& op, std::string& why) const {
  const auto& m = op.memory;
  const std::string dt = to_string(op.dtype);
  const auto& k = memory::find_kernel(m.kernel);
  memory::Dims d;
  d.rows = m.rows;
  d.cols = m.cols;
  d.n = m.params ? m.params : m.bytes / static_cast<int64_t>(dtype_bytes(op.dtype));
  const double bytes = static_cast<double>(memory::bytes_moved(k, d, op.dtype));
  // The op's own table (bandwidth by bytes moved); for the STREAM kernels (the gradient-norm
  // read) their curve (bandwidth by working set, the best implementation's points).
  std::vector<std::pair<double, double>> bytes_gbps;
  std::string source;
  // const json's operator[] on a missing key is undefined behaviour: every key is checked first.
  const json& mem = calibration_.is_object() && calibration_.contains("memory") ? calibration_["memory"] : kNone;
  const auto has = [](const json& j, const std::string& key) { return j.is_object() && j.contains(key); };
  if (has(mem, "ops") && has(mem["ops"], m.kernel) && has(mem["ops"][m.kernel], dt) &&
      has(mem["ops"][m.kernel][dt], "by_bytes")) {
    for (const auto& e : mem["ops"][m.kernel][dt]["by_bytes"])
      bytes_gbps.emplace_back(e["bytes"].get<double>(), e["bandwidth_gbps"].get<double>());
    source = "calibration memory.ops." + m.kernel + "." + dt + ".by_bytes";
  } else if (has(mem, "stream") && has(mem["stream"], "curves")) {
    for (const auto& curve : mem["stream"]["curves"]) {
      if (curve["kernel"] != m.kernel || curve["dtype"] != dt) continue;
      for (const auto& p : curve["points"])
        bytes_gbps.emplace_back(p["working_set_bytes"].get<double>(), p["bandwidth_gbps"].get<double>());
      source = "calibration memory.stream.curves[" + m.kernel + " " + dt + " " + curve["impl"].get<std::string>() + "]";
      break;
    }
  }
  std::sort(bytes_gbps.begin(), bytes_gbps.end());
  bool inside = false;
  double gbps = bytes_gbps.empty() ? 0 : interpolate_log2(bytes_gbps, bytes, inside);
  if (!(gbps > 0) && has(mem, "device_bandwidth_gbps") && mem["device_bandwidth_gbps"].is_number()) {
    gbps = mem["device_bandwidth_gbps"].get<double>();
    inside = false;
    source = "calibration memory.device_bandwidth_gbps";
  }
  if (!(gbps > 0) || !(bytes > 0)) {
    why = "no memory row of this shape, no memory.ops." + m.kernel + "." + dt +
          " table or stream curve and no memory.device_bandwidth_gbps";
    return std::nullopt;
  }
  OpCost c;
  c.time_us = bytes / (gbps * 1e9) * 1e6;
  c.provenance = inside_or_not(inside);
  c.method = fmt(bytes) + " bytes moved / " + fmt(gbps) + " GB/s (log2 interpolation in bytes)";
  c.sources.push_back(source);
  return c;
}

std::optional<OpCost> OpCoster::from_comm_model(const ModelOp& op, const model::ParallelLayout& layout,
                                                std::string& why) const {
  if (!comm_) {
    why = "no collectives row of this shape and no communication model (" + comm_error_ + ")";
    return std::nullopt;
  }
  calibration::CommQuery q;
  q.collective = op.comm.collective;
  q.nranks = op.comm.group_size;
  q.nnodes = group_nnodes(op.comm.group, op.comm.group_size, layout, options_.ranks_per_node);
  q.size_bytes = static_cast<double>(op.comm.size_bytes);
  q.dtype = to_string(op.dtype);
  calibration::CommPrediction p;
  try {
    p = comm_->predict(q);
  } catch (const std::exception& e) {
    try {  // another dtype's group: bandwidth per byte is what matters
      q.dtype.clear();
      p = comm_->predict(q);
    } catch (const std::exception&) {
      why = e.what();
      return std::nullopt;
    }
  }
  OpCost c;
  c.time_us = p.time_us;
  c.provenance = p.provenance;
  c.method = "communication model, " + std::to_string(q.nnodes) + " node(s): " + p.method +
             (p.extrapolated_by.empty() ? "" : " (" + p.extrapolated_by + ")");
  for (const auto& g : p.groups) c.sources.push_back("calibration communication.collectives " + g);
  c.has_interval = p.has_interval;
  c.lo_us = p.lo_us;
  c.hi_us = p.hi_us;
  c.interval_rule = p.interval_rule;
  return c;
}

namespace {
// A group's spans_nodes: an integer 0/1 in calibration.json (its schema), a boolean in older files.
bool spans_nodes(const json& group) {
  const json& v = group["spans_nodes"];
  return v.is_boolean() ? v.get<bool>() : v.get<int64_t>() != 0;
}
}  // namespace

// A message between two ranks: the p2p fit of its tier, within a node or across nodes (where the
// layout puts the pair on two nodes: group_nnodes). A pair across nodes with no p2p group measured
// across nodes takes the intra-node fit, extrapolated, and says so.
std::optional<OpCost> OpCoster::from_p2p_fit(const ModelOp& op, const model::ParallelLayout& layout,
                                             std::string& why) const {
  const json* groups = calibration_.is_object() ? &calibration_["communication"]["p2p"] : nullptr;
  const bool across = group_nnodes(op.comm.group, op.comm.group_size, layout, options_.ranks_per_node) > 1;
  const json* pick = nullptr;
  bool pingpong = false, other_tier = false;
  auto find = [&](bool spanning) {
    if (!groups || !groups->is_array()) return;
    for (const char* pattern : {op.comm.collective.c_str(), "sendrecv", "pingpong"}) {
      for (const auto& g : *groups)
        if (g["pattern"] == pattern && spans_nodes(g) == spanning && g["best"]["form"].is_string()) pick = &g;
      if (pick) {
        pingpong = std::string(pattern) == "pingpong";
        return;
      }
    }
  };
  find(across);
  if (!pick && across) {
    find(false);
    other_tier = pick != nullptr;
  }
  if (!pick) {
    why = "no p2p row of this size and no communication.p2p fit for " + op.comm.collective +
          (across ? " (the pair spans nodes at --ranks-per-node " + std::to_string(options_.ranks_per_node) + ")" : "");
    return std::nullopt;
  }
  const std::string form = (*pick)["best"]["form"];
  double lo = INFINITY, hi = 0;
  for (const auto& p : (*pick)["points"]) {
    lo = std::min(lo, p["size_bytes"].get<double>());
    hi = std::max(hi, p["size_bytes"].get<double>());
  }
  const double s = static_cast<double>(op.comm.size_bytes);
  OpCost c;
  c.time_us = calibration::predict_comm_form(form, (*pick)[form], s, 1.0) / (pingpong ? 2.0 : 1.0);
  c.provenance = other_tier ? Provenance::extrapolated : inside_or_not(s >= lo && s <= hi);
  c.method = "communication.p2p " + (*pick)["pattern"].get<std::string>() + " fit (" + form + ")" +
             (pingpong ? ", half a round trip" : "") + (across && !other_tier ? ", across nodes" : "") +
             (other_tier ? ", within a node: the pair spans nodes at --ranks-per-node " +
                               std::to_string(options_.ranks_per_node) + " and no p2p was measured across nodes"
                         : "");
  c.sources.push_back("calibration communication.p2p[pattern=" + (*pick)["pattern"].get<std::string>() + "]." + form);
  const calibration::IntervalAt at = calibration::interval_at((*pick).value("interval", json()), s, c.time_us);
  c.has_interval = at.computed;
  c.lo_us = at.computed ? at.lo_us : c.time_us;
  c.hi_us = at.computed ? at.hi_us : c.time_us;
  c.interval_rule = at.computed ? "the p2p group's conformal 90% interval" : "none: the p2p group has no interval";
  return c;
}

namespace {

// What an op's cost depends on: its bench, role (a --model run's row for that role wins) and
// measurement cells (dtype included); a message's also on its group and on the nodes the layout
// spreads the group over (group_nnodes), the one fact of the layout the communication model and
// the p2p tiers read.
std::string answer_key(const ModelOp& op, const model::ParallelLayout& l, int64_t ranks_per_node) {
  std::string key = op.bench();
  key.reserve(160);
  key += '|';
  key += op.role;
  op.visit_shape_cells([&](std::string_view k, std::string_view v) {
    key += '|';
    key += k;
    key += '=';
    key += v;
  });
  if (op.kind == OpKind::collective || op.kind == OpKind::p2p) {
    key += '|';
    key += op.comm.group;
    key += '|';
    key += std::to_string(op.comm.group_size);
  }
  if (op.kind == OpKind::collective || op.kind == OpKind::p2p) {
    key += "|nodes=";
    key += std::to_string(group_nnodes(op.comm.group, op.comm.group_size, l, ranks_per_node));
  }
  return key;
}

}  // namespace

const OpCost* OpCoster::cost(const ModelOp& op, const model::ParallelLayout& layout, std::string& why) const {
  const std::string key = answer_key(op, layout, options_.ranks_per_node);
  if (const auto it = answers_.find(key); it != answers_.end()) {
    why = it->second.why;
    return it->second.cost ? &*it->second.cost : nullptr;
  }
  std::optional<OpCost> c = cost_point(op, layout, why);
  if (c && !c->has_interval) {
    c->lo_us = c->hi_us = c->time_us;
    if (c->interval_rule.empty()) c->interval_rule = "none: counted at its time";
  }
  const auto [it, added] = answers_.emplace(key, Answer{std::move(c), why});
  return it->second.cost ? &*it->second.cost : nullptr;
}

std::optional<OpCost> OpCoster::cost_point(const ModelOp& op, const model::ParallelLayout& layout,
                                           std::string& why) const {
  if (op.kind == OpKind::gemm) {
    std::string had;  // the accumulation the figure was measured with ("" not known)
    std::optional<OpCost> c = measured(op, &had);
    if (!c) {
      c = from_gemm_table(op, why);
      const json::json_pointer at("/compute/gemm/" + to_string(op.dtype) + "/accumulation");
      if (calibration_.is_object() && calibration_.contains(at) && calibration_[at].is_string())
        had = calibration_[at].get<std::string>();
    }
    if (c) price_accumulation(*c, op.gemm.accumulation, had);
    return c;
  }
  if (auto m = measured(op)) return m;
  switch (op.kind) {
    case OpKind::gemm:
      return std::nullopt;  // above
    case OpKind::attention:
      return from_attention_table(op, why);
    case OpKind::memory:
      return from_memory_table(op, why);
    case OpKind::collective:
      return from_comm_model(op, layout, why);
    case OpKind::p2p:
      return from_p2p_fit(op, layout, why);
  }
  return std::nullopt;
}

}  // namespace gpucal::predict
