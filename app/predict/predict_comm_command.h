// `gpucal predict-comm RESULTS_DIR|calibration.json --collective C --nranks N (--nnodes M |
// --ranks-per-node K) --size S [--dtype T] [--json]`: a collective's time from the fitted
// communication models, with its provenance.
#pragma once

#include <string>

#include "app/common/command.h"
#include "app/fit/comm_model.h"

namespace gpucal::calibration {

class PredictCommCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override;
  int run() override;

 private:
  std::string source_, sizes_;
  CommQuery query_;
  std::string form_ = "text";
};

}  // namespace gpucal::calibration
