// The step a workload export writes (`gpucal export --model ... --to chakra|simai`): the model,
// the layout and the prediction's policy, and the calibration the operations are costed from,
// exactly as `gpucal predict` costs them (app/predict/op_cost.h), so that the traces and the
// prediction hold the same operations, sizes and times.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/common/results_dir.h"
#include "app/export/export_common.h"
#include "app/export/step_program.h"
#include "app/predict/predict_step.h"
#include "core/model/model_spec.h"

namespace gpucal::calibration {

struct ExportWorkload {
  model::ModelSpec spec;           // the preset or JSON model, before --scale and --layers
  model::ParallelLayout layout;    // resolved (seq, dtype); pp_stage is set per stage
  predict::PredictOptions options;  // overlap, schedule, ranks per node
  ResultsDir results;              // the measured rows (none when the source is a calibration.json)
  nlohmann::json calibration;      // what predict reads: RESULTS_DIR/calibration.json, else built
};

// Every pipeline stage's program (app/export/step_program.h), stage 0 first, its operations
// costed. Each operation nothing measures or models adds one line ("stage S: bench role (shape):
// why") to report.refused, and the programs are empty then; with --allow-missing
// (w.options.allow_missing) the programs lack those operations instead, each a note of the
// report, whose lead says INCOMPLETE and how many.
std::vector<StageProgram> stage_programs(const ExportWorkload& w, ExportReport& report);

// A summary of the step for an export's notes: model, layout, micro-batches, policy.
std::string describe_step(const ExportWorkload& w, const model::Workload& stage);

// Every stage's figures for pricing the bubble (predict::StageTime), from `programs`
// (stage_programs: all of them); none with one stage.
std::vector<predict::StageTime> pipeline_times(const ExportWorkload& w, const std::vector<StageProgram>& programs);

// The breakdown `gpucal predict` computes for the stage (its step time, for the notes and the
// consistency checks): the stage's derived operations only (not the interleaved schedule's
// added messages), its bubble priced from `pipeline` (pipeline_times).
predict::Breakdown predicted_breakdown(const ExportWorkload& w, const StageProgram& stage,
                                       const std::vector<predict::StageTime>& pipeline);

// Durations in whole units (Chakra's microseconds, SimAI's nanoseconds), each rounded so that
// the sum written is the exact running sum rounded: the rounding error is carried to the next
// duration of the same lane or column, never lost or piled up.
struct CarriedRounder {
  double exact = 0;
  int64_t written = 0;
  int64_t next(double duration) {
    exact += duration;
    const int64_t d = std::max<int64_t>(std::llround(exact) - written, 0);
    written += d;
    return d;
  }
};

}  // namespace gpucal::calibration
