#include "app/predict/predict_comm_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/common/calibration_json.h"
#include "app/fit/calibration_build.h"
#include "app/common/results_dir.h"
#include "app/fit/comm_interval.h"
#include "core/driver/flag_checks.h"
#include "core/driver/sweep.h"
#include "core/formulas/collectives.h"
#include "core/registry/listing.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

namespace {

nlohmann::json load_calibration(const std::string& source) {
  namespace fs = std::filesystem;
  if (fs::is_regular_file(source)) return read_calibration_file(source);
  const fs::path existing = fs::path(source) / "calibration.json";
  if (fs::is_regular_file(existing)) return read_calibration_file(existing.string());
  return build_calibration(load_results(source));
}

nlohmann::json prediction_json(const CommQuery& q, const CommPrediction& p) {
  nlohmann::json interval = nullptr;
  if (p.has_interval)
    interval = {{"level", kIntervalLevel}, {"lo_s", p.lo_us * 1e-6}, {"hi_s", p.hi_us * 1e-6}, {"rule", p.interval_rule}};
  return {{"collective", q.collective}, {"nranks", q.nranks},         {"nnodes", q.nnodes},
          {"ranks_per_node", q.ranks_per_node}, {"size_bytes", q.size_bytes}, {"time_s", p.time_s},
          {"interval", interval},       {"interval_rule", p.interval_rule},
          {"algbw_gbps", p.algbw_gbps}, {"busbw_gbps", p.busbw_gbps}, {"provenance", to_string(p.provenance)},
          {"form", p.form},             {"groups", p.groups},         {"method", p.method},
          {"extrapolated_by", p.extrapolated_by.empty() ? nlohmann::json() : nlohmann::json(p.extrapolated_by)}};
}

std::vector<std::string> prediction_row(const CommQuery& q, const CommPrediction& p) {
  auto g = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v);
    return std::string(text);
  };
  return {q.collective, std::to_string(q.nranks), std::to_string(q.nnodes), g(q.size_bytes), g(p.time_us),
          p.has_interval ? g(p.lo_us) + " .. " + g(p.hi_us) : "-", g(p.busbw_gbps), to_string(p.provenance)};
}

void print_prediction(const CommQuery& q, const CommPrediction& p) {
  char line[256];
  std::snprintf(line, sizeof line, "%s %lld ranks, %.0f B: %.6g us  algbw %.4g GB/s  busbw %.4g GB/s  [%s",
                q.collective.c_str(), static_cast<long long>(q.nranks), q.size_bytes, p.time_us, p.algbw_gbps,
                p.busbw_gbps, to_string(p.provenance).c_str());
  std::cout << line << (p.extrapolated_by.empty() ? "" : " " + p.extrapolated_by) << "]\n";
  if (p.has_interval) {  // the rule in full: it can be longer than any fixed line
    std::snprintf(line, sizeof line, "  90%% interval: %.6g .. %.6g us (", p.lo_us, p.hi_us);
    std::cout << line << p.interval_rule << ")\n";
  } else {
    std::cout << "  90% interval: " << p.interval_rule << "\n";
  }
  std::cout << "  how: " << p.method << "\n  from:";
  for (const auto& g : p.groups) std::cout << " " << g;
  std::cout << " (form " << p.form << ")\n";
}

}  // namespace

CLI::App* PredictCommCommand::add_to(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "predict-comm", "communication time, bandwidth and provenance (measured/interpolated/extrapolated) from the fits");
  cmd->add_option("RESULTS_DIR", source_, "results folder or a calibration.json")->required();
  cmd->add_option("--collective", query_.collective, "the collective: " + registry::choices(collectives(), ", "))
      ->check(collective_check())
      ->required();
  add_number(*cmd, "--nranks", query_.nranks, "ranks in the group", {.min = 2, .max = 1 << 24})->required();
  add_number(*cmd, "--nnodes", query_.nnodes, "nodes the group spans", {.min = 1, .max = 1 << 24});
  add_number(*cmd, "--ranks-per-node", query_.ranks_per_node, "ranks per node: sets the group's node count where --nnodes is not given", {.min = 1, .max = 1 << 20});
  cmd->add_option("--size", sizes_, "S in bytes (nccl-tests' convention), axis syntax: 256M, 1M,4M, 8:1G:x2")
      ->required();
  cmd->add_option("--dtype", query_.dtype, "use this dtype's groups (default: fp32, then bf16, then any)");
  add_form_option(*cmd, form_);
  cmd->footer(examples_footer({
      {"gpucal predict-comm h100/ --collective allreduce --nranks 16 --nnodes 2 --size 256M",
       "one size across two nodes, with how it was predicted"},
      {"gpucal predict-comm results/smoke --collective allgather --nranks 4 --nnodes 1 --size 8:1G:x4 --as json",
       "a sweep of sizes as JSON"},
  }));
  return cmd;
}

int PredictCommCommand::run() {
  const CommModel model(load_calibration(source_));
  nlohmann::json all = nlohmann::json::array();
  registry::Listing table{.columns = {"collective", "ranks", "nodes", "size (B)", "time (us)", "90% interval (us)",
                                      "busbw (GB/s)", "provenance"}};
  for (const int64_t size : parse_axis(sizes_, "size")) {
    query_.size_bytes = static_cast<double>(size);
    const CommPrediction p = model.predict(query_);
    if (form_ == "json") all.push_back(prediction_json(query_, p));
    else if (form_ == "markdown") table.rows.push_back(prediction_row(query_, p));
    else print_prediction(query_, p);
  }
  if (form_ == "json") std::cout << all.dump(2) << "\n";
  if (form_ == "markdown") std::cout << registry::format_table(table, true);
  return 0;
}

}  // namespace gpucal::calibration
