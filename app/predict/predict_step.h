// One prediction: every operation of the derived step costed (op_cost.h), summed into the
// breakdown (step_time.h), as predict.json's document (results/SCHEMA.md, "predict.json").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/predict/op_cost.h"
#include "app/predict/step_time.h"

namespace gpucal::predict {

struct PredictOptions {
  OverlapPolicy overlap;
  Schedule schedule;
  CostOptions cost;
  double peak_tflops = 0;  // 0: the calibration's compute.gemm.<dtype>.peak_tflops
  bool allow_missing = false;
  bool suspect_rows_left_out = false;  // the folder's suspect rows were left out (no --allow-suspect)
  // false: the document holds the breakdown and what is missing only, not the model, policy or
  // one entry per op (a sweep ranks thousands of layouts and keeps only their breakdowns).
  bool ops_in_document = true;
};

struct Prediction {
  Breakdown breakdown;
  nlohmann::json document;           // predict.json
  std::vector<std::string> missing;  // ops nothing measures or models ("role (shape): why")
};

// Throws PredictError (one line) when an op cannot be costed and !allow_missing.
class PredictError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The row of RESULTS_DIR/step.csv (bench_step) that ran this model and layout, compared with
// the prediction of the operations it ran: adds `measured_step` to the document
// ({csv, line, point, time_s_median, p10_s, p90_s, samples, roles_skipped, predicted_s,
// predicted_over_measured}). Returns false when the file or such a row is absent.
bool compare_measured_step(Prediction& p, const std::string& step_csv, const model::Workload& w);

// `spec`: the model as given (before --scale and --layers), from which w and the pipeline's other
// stages are derived; with pp > 1 every stage is costed (the bubble is priced stage by stage,
// step_time.h), and an op another stage cannot cost is missing as "pipeline stage N: ...".
Prediction predict_step(const OpCoster& coster, const nlohmann::json& calibration, const model::ModelSpec& spec,
                        const model::Workload& w, const PredictOptions& options);

// How breakdown.step.interval is made (its `rule`; a sweep states it once, in `policy`).
extern const char* const kStepIntervalRule;

}  // namespace gpucal::predict
