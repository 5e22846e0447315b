// The suites of `gpucal run`: named sweeps over all benches, in ONE table (suites.cpp).
// Each bench also gets the common flags --backend, --out <results>/<bench>.csv, --quiet and
// --max-time-per-point from the runner; the arguments here are the sweep axes only.
#pragma once
#include <string>
#include <vector>

namespace gpucal::calibration {

struct BenchInvocation {
  std::string bench;              // gemm | attention | collectives | p2p | memory (binary bench_<bench>)
  std::vector<std::string> args;  // axis flags, in the benches' range syntax
  bool distributed = false;  // several ranks: threads of one process, or under a launcher (launch_plan.h)
};

struct Suite {
  std::string name;
  std::string purpose;
  double max_time_per_point_s = 0;
  std::vector<BenchInvocation> benches;
  // `gpucal predict` arguments for the step the run predicts from its own folder (a model the
  // suite's tables reach); empty: no prediction.
  std::vector<std::string> predict;
  std::string predict_label;  // the model in words, for the summary
};

const std::vector<Suite>& suites();
// Throws std::invalid_argument listing the known suites.
const Suite& find_suite(const std::string& name);

}  // namespace gpucal::calibration
