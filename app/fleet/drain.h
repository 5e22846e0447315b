// The scheduler acts on the verdict: `gpucal fleet report --drain` (and `fleet run --drain`)
// drains every node the report names, with the finding as Slurm's reason, so no job lands on it
// until someone resumes it (`scontrol update NodeName=N State=RESUME`):
//   scontrol update NodeName=N State=DRAIN Reason="gpucal fleet NAME: KIND METRIC"
// Links, groups and phases are not drained: a link names two nodes, and which one is at fault
// is for a person to find (the report's pair table).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "app/history/diagnosis.h"

namespace gpucal::fleet {

struct DrainAction {
  std::string node, reason, command;
};

// One action per node a suspect names (node, node links, hung, failed, timed out, no results),
// in the report's order of findings; the reason is the node's first finding, at most kMaxDrainReason characters of
// printable ASCII. `fleet_name`: the fleet folder's name; `scontrol`: the program (and options).
constexpr std::size_t kMaxDrainReason = 120;
std::vector<DrainAction> drain_actions(const Diagnosis& d, const std::string& fleet_name, const std::string& scontrol);

// Runs each action; says what was drained or could not be, one line each. Returns how many failed.
int drain_nodes(const std::vector<DrainAction>& actions, std::ostream& out);

}  // namespace gpucal::fleet
