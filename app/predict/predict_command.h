// `gpucal predict RESULTS_DIR --model ... [layout flags] [--overlap ...] [--schedule ...]
// [--sweep tp=1,2,4 pp=1,2]`: the subcommand's flags (the model and layout flags through
// model_flags.h, shared with the benches), its console table and predict.json.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/common/command.h"
#include "core/model/model_flags.h"
#include "app/predict/policy_flags.h"
#include "app/predict/predict_step.h"

namespace gpucal::predict {

struct PredictCommand : calibration::Command {
  std::string results_dir, out_path;
  model::ModelFlags flags;
  PolicyFlags policy;
  PredictOptions options;
  std::vector<std::string> sweep;
  bool quiet = false, measure_step = false;
  bool allow_suspect = false;  // cost from ok rows with suspect timings too

  CLI::App* add_to(CLI::App& app) override;
  // Exit status: 0, 1 (a prediction could not be made: one line on stderr), 2 (usage).
  int run() override;
  // The flags' combinations, the sweep's items and the model's layout (its pipeline schedule
  // included), as on the host backend.
  void check_without_inputs() override;

 private:
  int run_sweep(const nlohmann::json& cal, const calibration::ResultsDir& results, const std::string& backend,
                const std::string& out);
  void check_flag_combinations() const;  // UsageError: flags given that would be ignored
  CLI::App* app_ = nullptr;
};

// The flag name of a --sweep item's key ("micro_batch=1,2" -> "micro-batch"); UsageError for
// a malformed item or an unknown key.
std::string sweep_key(const std::string& item);
// "tp=1,2,4" items -> every combination applied to `base` (keys tp, pp, dp, cp, ep,
// micro-batch, global-batch, zero); UsageError for an unknown key, a key given twice, a value
// listed twice, or a value out of its range (model::check_bounds).
std::vector<model::ParallelLayout> sweep_layouts(const model::ParallelLayout& base,
                                                 const std::vector<std::string>& items);

}  // namespace gpucal::predict
