#include "app/fleet/drain.h"

#include <algorithm>

namespace gpucal::fleet {

std::vector<DrainAction> drain_actions(const Diagnosis& d, const std::string& fleet_name, const std::string& scontrol) {
  std::vector<DrainAction> actions;
  for (const std::string& node : d.suspect_nodes()) {
    const auto s = std::find_if(d.suspects.begin(), d.suspects.end(), [&](const Suspect& x) { return x.subject == node; });
    if (s == d.suspects.end() || node.find("--") != std::string::npos) continue;
    const int rail = rail_of(s->metric);
    const std::string what = rail >= 0 ? "rail " + std::to_string(rail) + " slow (" + s->metric + ")"
                             : s->kind == "node links" && s->metric.empty()
                                 ? "link steps failed or timed out"
                                 : s->kind + (s->metric.empty() ? "" : " " + s->metric);
    actions.push_back(drain_action(node, "gpucal fleet " + fleet_name + ": " + what, scontrol));
  }
  return actions;
}

}  // namespace gpucal::fleet
