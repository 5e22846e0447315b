// Everything a run is configured with, parsed once from the command line and passed by
// reference: no flag lives in a global.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/measure/malloc_policy.h"
#include "core/measure/measurement.h"

namespace CLI {
class App;
}

namespace gpucal {

struct RunConfig {
  std::string bench;              // gemm | attention | collectives | p2p
  std::string backend = "auto";   // auto | cuda | hip | host
  int device = 0;
  std::string out;                // calibration CSV path; empty: no CSV
  bool quiet = false;
  std::string regime = "cold";    // cold | hot
  MeasureConfig measure;
  bool max_time_given = false;    // --max-time-per-point was on the command line
  bool min_time_given = false;    // --min-time-per-point was (--benchmark_min_time is not counted)
  std::string combine = "max";    // per-sample combination across ranks: max | avg | min
  uint64_t seed = 20240601;       // base of every point's input seed
  std::string inject_fault;       // test-only: "corrupt-output" makes verification fail
  std::vector<std::string> command_line;
  MallocPolicy malloc;            // what bench_main applied before anything allocated (sidecar `malloc`)
};

// The flags every bench shares. `default_regime` is cold for compute benches.
void add_common_options(CLI::App& app, RunConfig& config);
// Validates and derives (measure.cold from regime, ...); throws UsageError.
void finalize_config(RunConfig& config);

}  // namespace gpucal
