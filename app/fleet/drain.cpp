#include "app/fleet/drain.h"

#include <algorithm>

#include "app/common/child_process.h"
#include "app/run/bench_runner.h"
#include "core/output/file_io.h"

namespace gpucal::fleet {

namespace {

// Slurm keeps the reason as given: printable ASCII only, quotes and control characters out.
std::string reason_text(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (out.size() >= kMaxDrainReason) break;
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '\\') out += c;
    else if (!out.empty() && out.back() != ' ') out += ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

std::vector<DrainAction> drain_actions(const Diagnosis& d, const std::string& fleet_name, const std::string& scontrol) {
  std::vector<DrainAction> actions;
  for (const std::string& node : d.suspect_nodes()) {
    const auto s = std::find_if(d.suspects.begin(), d.suspects.end(), [&](const Suspect& x) { return x.subject == node; });
    if (s == d.suspects.end() || node.find("--") != std::string::npos) continue;
    const std::string reason =
        reason_text("gpucal fleet " + fleet_name + ": " + s->kind + (s->metric.empty() ? "" : " " + s->metric));
    actions.push_back({node, reason,
                       scontrol + " update NodeName=" + calibration::shell_quote(node) + " State=DRAIN Reason=" +
                           calibration::shell_quote(reason)});
  }
  return actions;
}

int drain_nodes(const std::vector<DrainAction>& actions, std::ostream& out) {
  int failed = 0;
  for (const DrainAction& a : actions) {
    out.flush();
    const calibration::ChildResult r = calibration::run_shell_command(a.command);
    if (r.status == 0) {
      out << "  drained " << a.node << " (" << a.reason << ")\n";
    } else {
      ++failed;
      write_stderr_line("gpucal: error: could not drain " + a.node + ": `" + a.command + "` exited " +
                        std::to_string(r.status));
    }
  }
  return failed;
}

}  // namespace gpucal::fleet
