// One rank's run, from its backend to its last row: the whole program for one process, and
// the body of each rank thread under --threads.
#pragma once

#include <string>

#include "core/driver/driver.h"
#include "core/driver/rank_fault.h"

namespace gpucal {

// What every rank of the process shares, settled before the ranks start.
struct Launch {
  const BenchSpec& spec;
  std::string prog;
  std::string filter;
  std::string filter_source;  // where the filter came from, for messages
  bool listing = false;
  double timeout_s = 0;
  RankFault fault;
  bool list_impls = false, list_impls_markdown = false;  // --list-impls [--markdown]: print, run nothing
};

// The rank's exit code: 0, 1 (a failed point or write, an error) or 2 (bad input).
int run_rank(World& world, RunConfig config, const Launch& launch);

}  // namespace gpucal
