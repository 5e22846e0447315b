// The scheduler acts on a verdict: a node gpucal finds bad is drained in Slurm with gpucal's
// finding as the reason, so no job lands on it until someone resumes it
// (`scontrol update NodeName=N State=RESUME`):
//   scontrol update NodeName=N State=DRAIN Reason="gpucal ..."
// Used by `gpucal fleet report --drain` (app/fleet/drain.h: which nodes) and `gpucal check
// --health --drain` (this node).
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace gpucal::fleet {

struct DrainAction {
  std::string node, reason, command;
};

// Slurm keeps the reason as given: at most kMaxDrainReason characters of printable ASCII, quotes
// and control characters out.
constexpr std::size_t kMaxDrainReason = 120;
std::string slurm_reason_text(const std::string& text);

// The action for one node: `scontrol` (the program and its options) update NodeName=... .
DrainAction drain_action(const std::string& node, const std::string& reason, const std::string& scontrol);

// Runs each action; says what was drained or could not be, one line each. Returns how many failed.
int drain_nodes(const std::vector<DrainAction>& actions, std::ostream& out);

}  // namespace gpucal::fleet
