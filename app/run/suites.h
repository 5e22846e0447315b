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
  // With one rank (launch_plan.h): the axis flags of what needs no group, run as one process;
  // empty: the bench is skipped there.
  std::vector<std::string> single_args = {};
  // On a GPU backend, instead of `args` (empty: `args` everywhere): sizes a GPU needs to reach
  // its rates, which a host would take minutes over.
  std::vector<std::string> gpu_args = {};
};

struct Suite {
  std::string name;
  std::string purpose;
  double max_time_per_point_s = 0;
  // Writes the exports (export/); the fleet's node phases check figures and export nothing.
  bool exports = true;
  std::vector<BenchInvocation> benches;
  // `gpucal predict` arguments for the step the run predicts from its own folder (a model the
  // suite's tables reach); empty: no prediction.
  std::vector<std::string> predict;
  std::string predict_label;   // the model and its layout in words, for the summary
  std::string predict_model;   // the model alone (predict_label less the layout), for one rank
};

const std::vector<Suite>& suites();
// `gpucal predict` layout flags for one rank: every parallel degree (--tp, --pp, --dp, --cp,
// --ep) and --ranks-per-node set to 1, the rest as given.
std::vector<std::string> one_gpu_layout(const std::vector<std::string>& predict);
// Throws std::invalid_argument listing the known suites.
const Suite& find_suite(const std::string& name);

}  // namespace gpucal::calibration
