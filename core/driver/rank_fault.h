// --inject-rank-fault (test only): KIND-rank=R[@P]: rank R hangs (sleeps) or kills itself
// (SIGKILL) at its first launch of the P-th point run (0-based, default 1); hang-sink[@P]:
// rank 0 hangs while writing the P-th point's row (a stuck filesystem).
#pragma once

#include <functional>
#include <string>

namespace gpucal {

struct RankFault {
  std::string kind;  // "" | hang | kill | hang-sink
  int rank = -1, point = 1;
};

// Throws UsageError for text that is none of the forms above; "" is no fault.
RankFault parse_rank_fault(const std::string& text);

[[noreturn]] void hang_forever(const std::string& prog, int rank, const std::string& what);

// The hook run before each launch on this rank: hangs or kills it at the fault's point
// (`points_run` counts the points this rank has run); empty when the fault is not this rank's.
std::function<void()> launch_fault_hook(const RankFault& fault, const std::string& prog, int rank,
                                        const int& points_run);

}  // namespace gpucal
