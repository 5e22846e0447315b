// vTrain allreduce tables, one file per GPU count: <out>/vtrain/allreduce_<nranks>gpu_<nnodes>node.csv
// with nccl-tests row columns size(B),count,type,time(ns),busbw(GB/s), from 1 MiB to 1 GiB in
// 1 MiB steps. Each row's time comes from the group's best form (calibration.json `best`: the
// form with the lowest cross-validated error; a table takes any of them), else (an older
// calibration.json without `best`) is interpolated linearly in log time against log size between
// the two nearest measured medians; sizes outside the measured range are not written (no
// extrapolation) and are reported. busbw = S · 2(n-1)/n / time.
// One group per (nranks, nnodes): fp32 ("float", what nccl-tests defaults to) preferred,
// then bf16, then the dtype with most points.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "comm_forms.h"
#include "export_common.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Measured (size, median time) pairs, one per size (the smallest median when repeated).
std::vector<std::pair<double, double>> measured_curve(const json& group) {
  std::map<double, double> by_size;
  for (const json& p : group.at("points")) {
    const double s = p.at("size_bytes").get<double>(), t = p.at("time_us_median").get<double>();
    auto it = by_size.find(s);
    if (it == by_size.end() || t < it->second) by_size[s] = t;
  }
  return {by_size.begin(), by_size.end()};
}

double interpolate_log_log(const std::vector<std::pair<double, double>>& curve, double size) {
  auto hi = std::lower_bound(curve.begin(), curve.end(), std::make_pair(size, -1.0));
  if (hi->first == size) return hi->second;
  auto lo = std::prev(hi);
  const double u = (std::log(size) - std::log(lo->first)) / (std::log(hi->first) - std::log(lo->first));
  return std::exp((1 - u) * std::log(lo->second) + u * std::log(hi->second));
}

}  // namespace

ExportReport export_vtrain(const json& calibration, const std::string& out_dir) {
  ExportReport report;
  report.consumer = "vtrain";
  std::map<std::pair<int64_t, int64_t>, const json*> chosen;
  for (const json& g : calibration.at("communication").at("collectives")) {
    if (g.at("collective") != "allreduce") continue;
    const std::pair<int64_t, int64_t> key{g.at("nranks").get<int64_t>(), g.at("nnodes").get<int64_t>()};
    auto rank = [](const json& x) {
      const std::string d = x.at("dtype");
      return std::make_pair(d == "fp32" ? 2 : d == "bf16" ? 1 : 0, x.at("points").size());
    };
    const json*& current = chosen[key];
    if (!current || rank(g) > rank(*current)) current = &g;
  }
  if (chosen.empty()) {
    report.unfilled.push_back("all tables: no allreduce rows in collectives.csv");
    return report;
  }
  const std::string dir = ensure_dir(out_dir, "vtrain");
  for (const auto& [key, g] : chosen) {
    const auto [nranks, nnodes] = key;
    const std::string dtype = (*g).at("dtype");
    const std::string label = std::to_string(nranks) + " GPUs / " + std::to_string(nnodes) + " node(s)";
    const auto curve = measured_curve(*g);
    if (curve.empty()) {  // calibration_schema.h refuses such a file; an in-memory document may still hold one
      report.unfilled.push_back(label + ": no measured allreduce points");
      continue;
    }
    const auto elem = dtype_size_bytes(dtype);
    const double lo = std::max(kMiB, curve.front().first), hi = std::min(1024 * kMiB, curve.back().first);
    if (!elem || curve.size() < 2 || hi < lo) {
      report.unfilled.push_back(label + ": measured allreduce sizes " + std::to_string(std::llround(curve.front().first)) +
                                ".." + std::to_string(std::llround(curve.back().first)) + " B do not reach into 1 MiB..1 GiB" +
                                (elem ? "" : " or unknown dtype size"));
      continue;
    }
    const double bus_factor = 2.0 * static_cast<double>(nranks - 1) / static_cast<double>(nranks);
    const json& best = g->value("best", json::object());
    std::string form = best.contains("form") && best["form"].is_string() && g->contains(best["form"].get<std::string>())
                           ? best["form"].get<std::string>()
                           : "";
    std::ostringstream csv;
    csv << "size(B),count,type,time(ns),busbw(GB/s)\n";
    int rows = 0;
    for (double size = kMiB; size <= 1024 * kMiB; size += kMiB) {
      if (size < lo || size > hi) continue;
      double time_us = 0;
      if (!form.empty()) {
        try {
          time_us = predict_comm_form(form, (*g)[form], size, bus_factor);
        } catch (const std::invalid_argument& e) {  // a hand-edited calibration.json: fall back to the points
          report.notes.push_back(label + ": best form " + form + " not usable (" + e.what() +
                                 "); measured sizes interpolated instead");
          form.clear();
        }
      }
      if (form.empty()) time_us = interpolate_log_log(curve, size);
      char line[160];
      std::snprintf(line, sizeof line, "%.0f,%.0f,%s,%.1f,%.3f\n", size, size / *elem, nccl_type_name(dtype).c_str(),
                    time_us * 1e3, size * bus_factor / (time_us * 1e3));
      csv << line;
      ++rows;
    }
    const std::string path =
        dir + "/allreduce_" + std::to_string(nranks) + "gpu_" + std::to_string(nnodes) + "node.csv";
    write_text_file(path, csv.str());
    report.files_written.push_back(path);
    report.notes.push_back(label + ": " + std::to_string(rows) + " rows " +
                           (form.empty() ? "interpolated from " : "from the best form (" + form + ") of ") +
                           std::to_string(curve.size()) + " measured " + dtype + " sizes");
    if (lo > kMiB || hi < 1024 * kMiB)
      report.unfilled.push_back(label + ": sizes outside the measured " + std::to_string(static_cast<int64_t>(lo)) +
                                ".." + std::to_string(static_cast<int64_t>(hi)) + " B not written (no extrapolation)");
  }
  return report;
}

}  // namespace gpucal::calibration
