// vTrain (VIA-Research/vTrain f8dda84) allreduce tables. Its loader (src/predictor.py,
// get_allreduce_LUT and compute_comm_time) lists <trace_path>/<gpu_name lowercased>/ for names
// ending in "_LUT", takes the GPU count from the second '_' field after "GPU" (AR_GPU8_..._LUT),
// skips one header line, keys rows by int(size) // 2^20, reads time = int(second-to-last
// column) in ns and busbw = float(last column), and looks up round(size / 2^20) for every
// intra-node allreduce, falling back to the 1024 MiB row's busbw. So each table needs every
// 1 MiB step from 1 MiB to 1 GiB, integer times, and the in-place columns last:
//   <out>/vtrain/<gpu>/AR_GPU<N>_1M_1024M_LUT
//   size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)
// Tables are keyed by GPU count only and vTrain uses them for groups within a node, so only
// intra-node groups are written. Each row's time is interpolated (linear in log time against log
// size) between the two nearest measured medians of the group; rows outside the measured range
// come from the group's α–β over its sizes >= 1 MiB (export_comm.h) and are counted in the notes
// as extrapolated; busbw = S·2(N-1)/N / time.
// <out>/vtrain/system_config.json holds the config keys to merge into a vTrain config: gpu_name,
// trace_path, node_size, intra_node_bandwidth (its fallback, read as GiB/s) and, when measured,
// inter_node_bandwidth (read as Gbit/s of 2^30 bits).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "export_comm.h"
#include "export_common.h"
#include "export_figures.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

double interpolate_log_log(const std::vector<std::pair<double, double>>& curve, double size) {
  auto hi = std::lower_bound(curve.begin(), curve.end(), std::make_pair(size, -1.0));
  if (hi->first == size) return hi->second;
  auto lo = std::prev(hi);
  const double u = (std::log(size) - std::log(lo->first)) / (std::log(hi->first) - std::log(lo->first));
  return std::exp((1 - u) * std::log(lo->second) + u * std::log(hi->second));
}

// vTrain lowercases its gpu_name to find the folder; a name of [a-z0-9._-] survives that.
std::string gpu_folder_name(const json& calibration, const ExportSettings& settings) {
  if (const auto w = settings.word("vtrain_gpu_name")) {
    std::string s = *w;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  }
  std::string name;
  if (calibration.contains("run_metadata") && calibration["run_metadata"].is_object())
    for (const auto& [bench, sidecar] : calibration["run_metadata"].items()) {
      (void)bench;
      if (sidecar.is_object() && sidecar.contains("device") && sidecar["device"].is_object() &&
          sidecar["device"].contains("name") && sidecar["device"]["name"].is_string()) {
        name = sidecar["device"]["name"].get<std::string>();
        break;
      }
    }
  std::string out;
  for (unsigned char c : name) {
    const char l = static_cast<char>(std::tolower(c));
    if (std::isalnum(c) || l == '.' || l == '-')
      out += l;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "gpu" : out;
}

// One intra-node allreduce group per GPU count: fp32 ("float", nccl-tests' and vTrain's tables)
// preferred, then bf16, then the one with most points.
std::map<int64_t, const json*> allreduce_groups(const json& calibration) {
  std::map<int64_t, const json*> chosen;
  if (!calibration.contains("communication") || !calibration["communication"].is_object()) return chosen;
  const json& comm = calibration["communication"];
  if (!comm.contains("collectives") || !comm["collectives"].is_array()) return chosen;
  for (const json& g : comm["collectives"]) {
    if (!g.is_object() || g.value("collective", "") != "allreduce" ||
        g.value("spans_nodes", int64_t{-1}) != 0)
      continue;
    const int64_t n = g.value("nranks", int64_t{0});
    if (n < 2) continue;
    auto rank = [](const json& x) {
      const std::string d = x.value("dtype", "");
      return std::make_pair(d == "fp32"   ? 2
                            : d == "bf16" ? 1
                                          : 0,
                            x.contains("points") ? x["points"].size() : 0);
    };
    const json*& current = chosen[n];
    if (!current || rank(g) > rank(*current)) current = &g;
  }
  return chosen;
}

}  // namespace

ExportReport export_vtrain(const json& calibration, const ExportSettings& settings,
                           const std::string& out_dir) {
  ExportReport report;
  report.consumer = "vtrain";
  const std::string gpu = gpu_folder_name(calibration, settings);
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& [nranks, g] : allreduce_groups(calibration)) {
    const std::string dtype = g->value("dtype", "");
    const auto curve = measured_curve(*g);
    const auto elem = dtype_size_bytes(dtype);
    const std::string label = std::to_string(nranks) + " GPUs";
    // Sizes above (below) the measured range continue the secant through the two largest
    // (smallest) measured sizes; only when 3 sizes >= 1 MiB were measured, never from small
    // messages only.
    auto fit = group_figure(*g, nranks, curve.empty() ? 0 : curve.back().first);
    auto fit_low = group_figure(*g, nranks, curve.empty() ? 0 : curve.front().first);
    const auto large =
        std::count_if(curve.begin(), curve.end(), [](const auto& p) { return p.first >= kMiB; });
    if (large < 3 || (fit && !fit->bandwidth_regime)) fit.reset();
    if (large < 3 || (fit_low && !fit_low->bandwidth_regime)) fit_low.reset();
    if (!fit_low) fit_low = fit;
    const bool covered = curve.size() >= 2 && curve.front().first <= kMiB && curve.back().first >= kGiB;
    if (!elem || curve.size() < 2 || (!covered && !fit)) {
      report.notes.push_back(
          label + ": no table: the measured " + dtype +
          " sizes neither cover 1 MiB..1 GiB nor include 3 sizes >= 1 MiB to extend them; vTrain "
          "falls back to intra_node_bandwidth for this GPU count");
      continue;
    }
    const double bus_factor = 2.0 * static_cast<double>(nranks - 1) / static_cast<double>(nranks);
    std::ostringstream csv;
    csv << "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n";
    int extrapolated = 0;
    for (int mib = 1; mib <= 1024; ++mib) {
      const double size = mib * kMiB;
      double time_us = 0;
      if (size >= curve.front().first && size <= curve.back().first) {
        time_us = interpolate_log_log(curve, size);
      } else {
        const CommFigure& f = size > curve.back().first ? *fit : *fit_low;
        time_us = f.alpha_us + size * f.bus_factor / (f.busbw_gbps * 1e3);
        ++extrapolated;
      }
      const long long time_ns = std::max(1LL, std::llround(time_us * 1e3));
      const double busbw = size * bus_factor / static_cast<double>(time_ns);
      char line[200];
      std::snprintf(line, sizeof line, "%.0f,%.0f,%s,%lld,%.2f,%lld,%.2f\n", size, size / *elem,
                    nccl_type_name(dtype).c_str(), time_ns, busbw, time_ns, busbw);
      csv << line;
    }
    files.emplace_back(gpu + "/AR_GPU" + std::to_string(nranks) + "_1M_1024M_LUT", csv.str());
    std::ostringstream note;
    note << label << ": AR_GPU" << nranks << "_1M_1024M_LUT, " << 1024 - extrapolated
         << " rows interpolated (log-log) between the measured " << dtype << " allreduce medians ("
         << static_cast<int64_t>(curve.front().first) << ".." << static_cast<int64_t>(curve.back().first)
         << " B)";
    if (extrapolated) note << ", " << extrapolated << " rows EXTRAPOLATED beyond them with " << fit->source;
    note << "; the in-place columns repeat the measured (out-of-place) times";
    report.notes.push_back(note.str());
  }
  if (files.empty())
    report.refused.push_back(
        missing_figure("AR_GPU<N>_1M_1024M_LUT",
                       "no intra-node allreduce group with a fit over sizes >= 1 MiB (or "
                       "measured from 1 MiB to 1 GiB)",
                       "bench_collectives --collective allreduce --sizes 8:1G:x2 (gpucal run "
                       "--suite calibration)",
                       "", ""));

  // The config keys vTrain reads besides the tables.
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
  files.emplace_back("system_config.json", config.dump(2) + "\n");
  write_export(report, out_dir, files);
  return report;
}

}  // namespace gpucal::calibration
