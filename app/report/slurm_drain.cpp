#include "app/report/slurm_drain.h"

#include "app/common/child_process.h"
#include "app/run/bench_runner.h"
#include "core/output/file_io.h"

namespace gpucal::fleet {

std::string slurm_reason_text(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (out.size() >= kMaxDrainReason) break;
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '\\') out += c;
    else if (!out.empty() && out.back() != ' ') out += ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

DrainAction drain_action(const std::string& node, const std::string& reason, const std::string& scontrol) {
  const std::string text = slurm_reason_text(reason);
  return {node, text,
          scontrol + " update NodeName=" + calibration::shell_quote(node) + " State=DRAIN Reason=" +
              calibration::shell_quote(text)};
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
