// `gpucal fleet report --drain` (and `fleet run --drain`) drains every node the report names,
// with the finding as Slurm's reason (app/report/slurm_drain.h):
//   scontrol update NodeName=N State=DRAIN Reason="gpucal fleet NAME: KIND METRIC"
// Links, groups and phases are not drained: a link names two nodes, and which one is at fault
// is for a person to find (the report's pair table).
#pragma once
#include <string>
#include <vector>

#include "app/history/diagnosis.h"
#include "app/report/slurm_drain.h"

namespace gpucal::fleet {

// One action per node a suspect names (node, node links, hung, failed, timed out, no results),
// in the report's order of findings; the reason is the node's first finding. `fleet_name`: the
// fleet folder's name; `scontrol`: the program (and options).
std::vector<DrainAction> drain_actions(const Diagnosis& d, const std::string& fleet_name, const std::string& scontrol);

}  // namespace gpucal::fleet
