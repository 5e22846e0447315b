// The shared driver: command line -> ops -> Google Benchmark registration -> measurement
// -> rows in the sinks. A bench's main fills a BenchSpec and calls bench_main.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/output/metadata.h"
#include "core/output/run_files.h"
#include "core/driver/op.h"
#include "core/driver/run_config.h"
#include "core/measure/watchdog.h"
#include "core/world/world.h"

namespace CLI {
class App;
}

namespace gpucal {

class Telemetry;

struct BenchSpec {
  std::string bench;        // gemm | attention | collectives | p2p; also the CSV `bench` cell
  std::string description;  // first line of --help
  // Worked examples closing --help: {command, what it does}.
  std::vector<std::pair<std::string, std::string>> examples;
  std::vector<std::string> columns;  // bench-specific CSV columns after the common ones
  std::function<void(CLI::App&)> add_options;
  // Runs after parsing and backend selection: throws UsageError for bad axes. Returning
  // an empty list is fine (nothing to run).
  std::function<std::vector<std::unique_ptr<Op>>(Backend&, const RunConfig&)> make_ops;
  // Optional: handles informational flags (e.g. --list); returns true when the program
  // should exit 0 without running.
  std::function<bool(const RunConfig&)> before_run;
  // Optional, for a bench with an implementation registry (--impl): its rows as a table, plain or
  // markdown (core/registry/listing.h, impl_table). The driver then offers --list-impls [--markdown].
  std::function<std::string(bool markdown)> list_impls;
  // Optional: library versions and other facts for the sidecar.
  std::function<void(Metadata&, Backend&)> add_metadata;
  // Benches that run across ranks (collectives, p2p) set this instead of make_ops: it gets
  // the World (communicators bootstrap over it), the watchdog (communicators register
  // their abort with it) and this rank's sidecar (library facts; ops may add to it while
  // they run). Everything per rank lives in what it returns or writes there: under
  // --threads it runs once per rank thread, concurrently. Validate the axes before the
  // first collective call, so a bad input is rejected by every rank alike.
  std::function<std::vector<std::unique_ptr<Op>>(Backend&, const RunConfig&, World&, Watchdog&, Metadata&)>
      make_world_ops;
  // Default of --timeout (seconds without progress before the watchdog aborts; 0: off).
  double default_timeout_s = 0;
  // Optional: files that sum up the whole run, {suffix, content} (".best.csv"), asked for when
  // the run is over and written beside --out with its rows, only when they are complete.
  std::function<Summaries()> summary_files;
};

int bench_main(int argc, char** argv, const BenchSpec& spec);

// Optional for an Op: cells that verification produced (collectives: the `wrong` count),
// written to the row whether verification passed or not.
class VerificationCells {
 public:
  virtual ~VerificationCells() = default;
  virtual void verification_cells(Row& row) const = 0;
};

// Counts failures across points and turns them into the exit code.
struct RunTally {
  int rows = 0, failures = 0, skips = 0;
};

// Executes one op inside a Google Benchmark state: the unit the registration lambda
// calls. Exposed for tests that drive ops without Google Benchmark (state may be null).
// With a World of several ranks, every rank runs every point in the same order: each
// phase's outcome (setup, verify) is agreed across ranks, stopping by one agreement before
// each timed block and samples combined once after sampling (--combine: max by default;
// core/world/team.h), so all ranks take the same decisions; rank 0's row is the one written
// (statuses and details of other ranks are gathered into it).
struct PointContext {
  Backend& backend;
  const RunConfig& config;
  const std::string& bench;
  std::function<void(const Row&, const Measurement*)> emit;  // writes the row (and samples)
  World* world = nullptr;        // null: a single process
  Watchdog* watchdog = nullptr;  // armed per phase, beaten per launch
  std::function<void()> before_launch;  // test-only fault injection hook
  Telemetry* telemetry = nullptr;        // device clocks/power/temperature after sampling
  int repetition = 0;  // this run's index among the point's runs (Google Benchmark repetitions)
};
Row run_point(Op& op, PointContext& ctx, void* benchmark_state, RunTally& tally);

}  // namespace gpucal
