// The points of one rank's run, in rank 0's order: rank 0 registers every point with Google
// Benchmark, which filters, repeats and runs them, and hands each point's index to the other
// ranks before running it; they run the same point alongside (core/driver/rank_agreement.h).
#pragma once

#include <memory>
#include <vector>

#include "core/driver/driver.h"
#include "core/driver/run_sinks.h"
#include "core/measure/progress.h"

namespace gpucal {

struct PointLoop {
  World& world;
  Watchdog& watchdog;
  PointContext& ctx;
  RunTally& tally;
  const RunSinks& sinks;  // after a failed write, rank 0 runs no more points
  // Runs of each point so far: its `repetition` (Google Benchmark repeats a point
  // --benchmark_repetitions times; every rank counts the points rank 0 hands over alike).
  std::vector<int> runs;
  int points_run = 0;  // points this rank has run (the injected faults count them)
};

// Rank 0: every op registered and run by Google Benchmark; -1 to the other ranks at the end.
void run_points_as_root(const std::vector<std::unique_ptr<Op>>& ops, PointLoop& loop, Progress& progress);

// The other ranks: the point rank 0 hands over, until -1.
void run_points_as_follower(const std::vector<std::unique_ptr<Op>>& ops, PointLoop& loop);

}  // namespace gpucal
