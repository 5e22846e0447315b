// What the workload-export tests share: a calibration (tests/calibration/synthetic_results.h,
// with backward attention rows added), two small models, and gpucal run on them: the export
// and `gpucal predict` of every pipeline stage with the same flags.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpucal::calibration::testing {

// A fresh folder for the running test holding the calibration (results/) and the model
// configs (dense.json: a small Llama-style model with tied embeddings; moe.json: Mixtral-style,
// 4 experts, top 2). Both use bidirectional attention, which the synthetic rows measure.
std::string workload_fixture_dir();

// gpucal with `args` (stdout and stderr into `output`), run in `dir`; its exit status.
int run_gpucal(const std::string& args, std::string& output, const std::string& dir);

// `gpucal predict results <model_flags> --pp-stage S` for every stage S of `pp`: predict.json
// documents, stage 0 first (a failed prediction fails the calling test).
std::vector<nlohmann::json> predict_stages(const std::string& dir, const std::string& model_flags, int pp);

}  // namespace gpucal::calibration::testing
