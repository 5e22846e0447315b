// The steps of one fleet phase (or round), run at once: each `sh -c COMMAND` in a process group
// of its own, stdout and stderr to its log file. A step that passes its deadline gets SIGTERM,
// then SIGKILL 10 s later (srun stops the step's tasks on the first; a task on a node that does
// not answer needs the second). SIGINT, SIGTERM and SIGHUP reaching gpucal stop every step the
// same way and are reported, so a cancelled job leaves nothing running and the caller can still
// write what was measured.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace gpucal::fleet {

struct Step {
  std::string command;
  std::string log_path;
  double timeout_s = 600;
  // Not empty: an environment variable the step gets, naming a folder of its own (made under
  // $TMPDIR or /tmp before it starts, removed when it ends). Open MPI 4's mpirun builds its
  // session folder /tmp/ompi.HOST.UID with a check-then-mkdir that two mpiruns starting at once
  // race on ("mkdir ... File exists", orte_init fails): concurrent steps on one host each get
  // their own (launcher.h: private_tmpdir_variable).
  std::string private_tmpdir_variable;
};

struct StepOutcome {
  int status = -1;          // exit code, or 128 + signal; -1: never started
  bool timed_out = false;   // stopped at its deadline
  bool interrupted = false; // stopped because gpucal was asked to stop
  double seconds = 0;
};

// Stragglers: once `fraction` of the steps ended, a step still running after max(min_s,
// factor x the median time of those that ended) is timed out (never later than its own timeout).
struct StragglerRule {
  double fraction = 0.5;
  double factor = 4;
  double min_s = 120;
};

std::vector<StepOutcome> run_steps(const std::vector<Step>& steps, const std::optional<StragglerRule>& stragglers = std::nullopt);

// The signal that asked gpucal to stop during run_steps (0: none); later phases are skipped.
int stop_signal_received();

}  // namespace gpucal::fleet
