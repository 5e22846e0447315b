#include "app/predict/policy_flags.h"

#include <CLI/CLI.hpp>

#include "app/common/results_dir.h"
#include "core/driver/flag_checks.h"
#include "core/errors.h"

namespace gpucal::predict {

void PolicyFlags::add(CLI::App& cmd, PredictOptions& options) {
  options_given.push_back(cmd.add_option("--overlap", overlap, "communication hidden under compute: none, tp, dp or tp,dp")
                              ->capture_default_str());
  options_given.push_back(cmd.add_option("--schedule", options.schedule.name, "pipeline schedule: 1f1b or interleaved")
                              ->capture_default_str());
  virtual_stages_opt = add_number(cmd, "--virtual-stages", options.schedule.virtual_stages,
                                  "interleaved: model chunks per pipeline rank (v, at least 2); only with "
                                  "--schedule interleaved",
                                  {.min = 1, .max = 1 << 20});
  options_given.push_back(virtual_stages_opt);
  options_given.push_back(add_number(cmd, "--ranks-per-node", options.cost.ranks_per_node,
                                     "ranks per node: places the layout's groups on nodes for the communication model",
                                     {.min = 1, .max = 1 << 20})
                              ->capture_default_str());
}

void PolicyFlags::check(const PredictOptions& options) const {
  if (virtual_stages_opt && virtual_stages_opt->count() > 0 && options.schedule.name != "interleaved")
    throw UsageError("--virtual-stages needs --schedule interleaved (1f1b has one model chunk per rank)");
}

void PolicyFlags::resolve(PredictOptions& options) const {
  check(options);
  options.overlap = parse_overlap(overlap);
}

std::string results_backend(const calibration::ResultsDir& results) {
  for (const auto& [name, b] : results.benches)
    if (!b.ok_rows.empty() && b.table.has_column("backend")) return b.table.get_string(b.ok_rows.front(), "backend");
  return "host";
}

}  // namespace gpucal::predict
