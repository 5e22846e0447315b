// The prediction's policy flags, --overlap, --schedule, --virtual-stages and --ranks-per-node:
// one definition for `gpucal predict` and for the workload exports (`gpucal export --to chakra |
// simai`), which must assume what the prediction assumes.
#pragma once

#include <string>

#include "app/predict/predict_step.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gpucal::calibration {
struct ResultsDir;
}

namespace gpucal::predict {

struct PolicyFlags {
  std::string overlap = "none";
  CLI::Option* virtual_stages_opt = nullptr;
  std::vector<CLI::Option*> options_given;  // every flag added (to refuse them where they mean nothing)

  // Adds the four flags to `cmd`, filling `options`.
  void add(CLI::App& cmd, PredictOptions& options);
  // UsageError for --virtual-stages without --schedule interleaved (1f1b has one model chunk
  // per rank).
  void check(const PredictOptions& options) const;
  // check(), then --overlap parsed into `options` (UsageError when malformed).
  void resolve(PredictOptions& options) const;
};

// The backend a results folder was measured on (the first ok row's `backend`; host when none
// says): what `--dtype auto` resolves against.
std::string results_backend(const calibration::ResultsDir& results);

}  // namespace gpucal::predict
