// vTrain (VIA-Research/vTrain f8dda84) allreduce tables. Its loader (src/predictor.py,
// get_allreduce_LUT and compute_comm_time) lists <trace_path>/<gpu_name lowercased>/ for names
// ending in "_LUT", takes the GPU count from the second '_' field after "GPU" (AR_GPU8_..._LUT),
// skips one header line, keys rows by int(size) // 2^20, reads time = int(second-to-last
// column) in ns and busbw = float(last column), and looks up round(size / 2^20) for every
// intra-node allreduce, falling back to the 1024 MiB row's busbw. So each table needs every
// 1 MiB step from 1 MiB to 1 GiB, integer times, and the in-place columns last:
//   <out>/vtrain/<gpu>/AR_GPU<N>_1M_1024M_LUT
//   size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)
// Tables are keyed by GPU count only: one per power of two up to node_size x nodes (and per
// measured rank count), a count within a node from the intra-node measurements, a larger one
// across ceil(N / node_size) nodes from the inter-node ones. Every row comes from the
// communication models (comm_model.h): measured medians, the best form between measured sizes,
// the regime lines beyond them, rank counts interpolated or extrapolated; the notes count the
// rows of each provenance. busbw = S·2(N-1)/N / time.
// <out>/vtrain/system_config.json holds the config keys to merge into a vTrain config: gpu_name,
// trace_path, node_size, intra_node_bandwidth (its fallback, read as GiB/s) and, when measured,
// inter_node_bandwidth (read as Gbit/s of 2^30 bits).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "app/fit/comm_model.h"

#include "app/export/export_comm.h"
#include "app/export/export_common.h"
#include "app/export/export_figures.h"
#include "app/export/workload_refit.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// vTrain lowercases its gpu_name to find the folder; a name of [a-z0-9._-] survives that.
std::string gpu_folder_name(const json& calibration, const ExportSettings& settings) {
  if (const auto w = settings.word("vtrain_gpu_name")) {
    std::string s = *w;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  }
  const std::string name = calibration_device_name(calibration);
  std::string out;
  for (unsigned char c : name) {
    const char l = static_cast<char>(std::tolower(c));
    if (std::isalnum(c) || l == '.' || l == '-')
      out += l;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  // A device named "." or ".." would name the export's own folder or the one above it.
  if (!out.empty() && out.find_first_not_of('.') == std::string::npos)
    throw std::invalid_argument("vtrain: the device name '" + name + "' cannot name the LUT folder; pass --set vtrain_gpu_name=NAME");
  return out.empty() ? "gpu" : out;
}

// The GPU counts vTrain asks a table for: its tensor-parallel and (while tp < node_size)
// data-parallel allreduce groups, powers of two up to the modelled machine (node_size x nodes),
// and every measured allreduce rank count.
std::vector<int64_t> table_gpu_counts(const CommModel& model, int64_t gpn, int64_t nodes) {
  std::vector<int64_t> counts;
  int64_t top = std::max<int64_t>(2, gpn * std::max<int64_t>(1, nodes));
  for (const auto& g : model.groups())
    if (g.collective == "allreduce") top = std::max(top, g.nranks);
  for (int64_t n = 2; n <= top; n *= 2) counts.push_back(n);
  for (const auto& g : model.groups())
    if (g.collective == "allreduce" && g.nranks >= 2) counts.push_back(g.nranks);
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

// "allreduce/fp32/n4/rpn4/nodes1" -> "fp32"
std::string dtype_of_key(const std::string& key) {
  const auto a = key.find('/'), b = key.find('/', a + 1);
  return a == std::string::npos || b == std::string::npos ? "" : key.substr(a + 1, b - a - 1);
}

// GPUs per node: --set or the largest measured ranks_per_node, else the inter-node group's.
int64_t node_gpus_of(const json& calibration, const ExportSettings& settings) {
  const int64_t g = gpus_per_node(calibration, settings).gpus;
  if (g >= 2) return g;
  const auto inter = measured_inter_node(calibration);
  return inter ? inter->ranks_per_node : int64_t{0};
}

// Nodes of the modelled machine: --set nodes, else the inter-node group's, else 1.
int64_t modelled_nodes(const json& calibration, const ExportSettings& settings) {
  if (const auto n = settings.number("nodes")) return static_cast<int64_t>(*n);
  const auto inter = measured_inter_node(calibration);
  return inter ? inter->nnodes : int64_t{1};
}

// One AR_GPU<N> table: its CSV text and where its rows came from.
struct LutTable {
  std::string csv;
  std::map<Provenance, int> rows_by;
  std::set<std::string> groups, forms;
  std::string method;  // the last non-measured row's
};

// Every 1 MiB step from 1 MiB to 1 GiB for nranks GPUs, rpn per node; throws
// std::invalid_argument when the models cannot predict it.
LutTable predict_table(const CommModel& model, int64_t nranks, int64_t rpn) {
  LutTable t;
  std::string dtype;
  std::ostringstream csv;
  csv << "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n";
  const double bus_factor = 2.0 * static_cast<double>(nranks - 1) / static_cast<double>(nranks);
  for (int mib = 1; mib <= 1024; ++mib) {
    const double size = mib * kMiB;
    const CommPrediction p =
        model.predict({.collective = "allreduce", .nranks = nranks, .ranks_per_node = rpn, .size_bytes = size});
    ++t.rows_by[p.provenance];
    for (const auto& g : p.groups) t.groups.insert(g);
    t.forms.insert(p.form);
    if (dtype.empty() && !p.groups.empty()) dtype = dtype_of_key(p.groups.front());
    if (p.provenance != Provenance::measured) t.method = p.method;
    const long long time_ns = std::max(1LL, std::llround(p.time_us * 1e3));
    const double busbw = size * bus_factor / static_cast<double>(time_ns);
    const double elem = dtype_size_bytes(dtype).value_or(4);
    char line[200];
    std::snprintf(line, sizeof line, "%.0f,%.0f,%s,%lld,%.2f,%lld,%.2f\n", size, size / elem,
                  nccl_type_name(dtype.empty() ? "fp32" : dtype).c_str(), time_ns, busbw, time_ns, busbw);
    csv << line;
  }
  t.csv = csv.str();
  return t;
}

// The note of a written table: its groups, forms and rows per provenance.
std::string table_note(const std::string& label, int64_t nranks, int64_t rpn, const LutTable& t) {
  std::ostringstream note;
  note << label << " (" << (nranks > rpn ? "across " + std::to_string((nranks + rpn - 1) / rpn) + " nodes"
                                          : std::string("within a node"))
       << "): AR_GPU" << nranks << "_1M_1024M_LUT from";
  for (const auto& g : t.groups) note << " " << g;
  note << " (forms:";
  for (const auto& f : t.forms) note << " " << f;
  auto rows = [&](Provenance p) {
    const auto it = t.rows_by.find(p);
    return it == t.rows_by.end() ? 0 : it->second;
  };
  note << "), rows: " << rows(Provenance::measured) << " measured, " << rows(Provenance::interpolated)
       << " interpolated, " << rows(Provenance::extrapolated) << " EXTRAPOLATED";
  if (!t.method.empty()) note << " (last non-measured row: " << t.method << ")";
  note << "; the in-place columns repeat these times";
  return note.str();
}

// The table for nranks GPUs, into `files`; a note instead when the models cannot make it.
void add_table(const CommModel& model, const std::string& gpu, int64_t nranks, int64_t node_gpus,
               std::vector<std::pair<std::string, std::string>>& files, ExportReport& report) {
  const std::string label = std::to_string(nranks) + " GPUs";
  const int64_t rpn = std::min(nranks, node_gpus);
  LutTable table;
  try {
    table = predict_table(model, nranks, rpn);
  } catch (const std::invalid_argument& e) {
    report.notes.push_back(label + " (" + std::to_string(rpn) + " per node): no table, " + e.what() +
                           "; vTrain falls back to intra_node_bandwidth for this GPU count");
    return;
  }
  // Rows from groups measured only up to 1 MiB would extrapolate three decades: not written.
  std::string small_only;
  for (const auto& info : model.groups())
    if (table.groups.count(info.key) && info.max_size_bytes <= kMiB) small_only = info.key;
  if (!small_only.empty()) {
    report.notes.push_back(label + ": no table, " + small_only +
                           " was measured only up to 1 MiB (the 1 MiB..1 GiB rows would all be extrapolated "
                           "from small messages); vTrain falls back to intra_node_bandwidth for this GPU count");
    return;
  }
  files.emplace_back(gpu + "/AR_GPU" + std::to_string(nranks) + "_1M_1024M_LUT", table.csv);
  report.notes.push_back(table_note(label, nranks, rpn, table));
}

// The config keys vTrain reads besides the tables.
json system_config(const json& calibration, const ExportSettings& settings, const std::string& gpu,
                   const std::string& out_dir, ExportReport& report) {
  json config{{"gpu_name", gpu}, {"trace_path", (std::filesystem::absolute(out_dir) / "vtrain").string()}};
  const int64_t gpn = gpus_per_node(calibration, settings).gpus;
  if (gpn >= 2) {
    config["node_size"] = gpn;
    if (const auto ar = collective_figure(calibration, "allreduce", gpn, 0, 0, {"fp32", "bf16"})) {
      // compute_comm_time's fallback: size / (bw·2^30) · 2(n-1)/n.
      config["intra_node_bandwidth"] = ar->busbw_gbps * 1e9 / kGiB;
      report.notes.push_back(
          "system_config.json intra_node_bandwidth = allreduce bus bandwidth in GiB/s (vTrain "
          "multiplies by 2^30), for GPU counts without a table; " +
          ar->describe());
    }
  }
  const auto by_hand = settings.number("inter_busbw_gbps");
  const auto inter = measured_inter_node(calibration);
  if (by_hand || inter) {
    const auto ar = inter ? collective_figure(calibration, "allreduce", inter->nranks, 1, 0, {"fp32", "bf16"})
                          : std::nullopt;
    const double busbw = by_hand ? *by_hand : ar ? ar->busbw_gbps : 0;
    if (busbw > 0) {
      // Data-parallel allreduce across nodes: size / (bw·2^30/8) · 2(dp-1)/dp.
      config["inter_node_bandwidth"] = busbw * 1e9 * 8 / kGiB;
      report.notes.push_back(
          "system_config.json inter_node_bandwidth = inter-node allreduce bus bandwidth in "
          "vTrain's Gbit/s (x 2^30 / 8 bytes)" +
          std::string(by_hand ? " (--set inter_busbw_gbps)" : "; " + ar->describe()));
    }
  } else {
    report.notes.push_back(
        "system_config.json has no inter_node_bandwidth: nothing measured across nodes (vTrain's "
        "default 800 stays)");
  }
  report.notes.push_back(
      "system_config.json: merge these keys into your vTrain config; trace_path is this export's "
      "vtrain folder (put vTrain's kernel traces there or copy the " +
      gpu + "/ folder to yours)");
  return config;
}

}  // namespace

ExportReport export_vtrain(const json& calibration, const ExportSettings& settings,
                           const std::string& out_dir) {
  ExportReport report;
  report.consumer = "vtrain";
  const std::string gpu = gpu_folder_name(calibration, settings);
  std::vector<std::pair<std::string, std::string>> files;
  // Every row from the communication models (comm_model.h): the measured median where that size
  // was measured, the group's best form between measured sizes, its regime lines beyond them, and
  // for a GPU count not measured the bus bandwidth interpolated between measured counts or the
  // nearest group's scaled (each row's provenance counted in the notes).
  const int64_t node_gpus = node_gpus_of(calibration, settings);
  const int64_t nodes = modelled_nodes(calibration, settings);
  std::optional<CommModel> model;
  try {
    model.emplace(calibration);
  } catch (const std::invalid_argument&) {
  }
  if (model && node_gpus >= 1)
    for (const int64_t nranks : table_gpu_counts(*model, node_gpus, nodes))
      add_table(*model, gpu, nranks, node_gpus, files, report);
  if (files.empty())
    report.refused.push_back(
        missing_figure("AR_GPU<N>_1M_1024M_LUT",
                       "no allreduce group measured beyond 1 MiB that the communication models can "
                       "predict from",
                       "bench_collectives --collective allreduce --sizes 8:1G:x2 (gpucal run "
                       "--suite calibration)",
                       "", ""));
  json config = system_config(calibration, settings, gpu, out_dir, report);
  if (settings.workload() && report.ok()) refit_vtrain(*settings.workload(), config, report);
  files.emplace_back("system_config.json", config.dump(2) + "\n");
  write_export(report, out_dir, files);
  return report;
}

}  // namespace gpucal::calibration
