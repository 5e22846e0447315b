// `gpucal export`'s flags for the workload targets (chakra, simai): --model / --model-config and
// the layout flags as `gpucal predict` takes them (core/model/model_flags.h) and the prediction's
// policy (app/predict/policy_flags.h). The hardware targets take them too: with --model they fit
// their single-number fields to the step's operations (app/export/workload_refit.h).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "app/export/export_workload.h"
#include "app/predict/policy_flags.h"
#include "core/model/model_flags.h"

namespace gpucal::calibration {

class ExportWorkloadFlags {
 public:
  void add(CLI::App& cmd);
  // UsageError (one line, before anything is read): a workload target without --model, or the
  // step's flags without --model.
  void check(const std::string& target) const;
  // The step, or null without --model. `results`: the folder's rows when the source is a results
  // folder (null for a calibration.json); `calibration`: the source's calibration. Costs come
  // from what `gpucal predict` reads: RESULTS_DIR/calibration.json when present, else the
  // calibration built from the folder. UsageError for a layout the model cannot run.
  std::shared_ptr<const ExportWorkload> resolve(const std::string& source, const ResultsDir* results,
                                                const nlohmann::json& calibration) const;

 private:
  model::ModelFlags model_;
  predict::PolicyFlags policy_;
  predict::PredictOptions options_;
  CLI::Option* allow_missing_ = nullptr;
};

}  // namespace gpucal::calibration
