// A bench run by `gpucal run`: `sh -c COMMAND` in a process group of its own, waited for.
// SIGINT, SIGTERM and SIGHUP that reach gpucal meanwhile are passed on to that group (Ctrl-C
// in a terminal reaches gpucal's group only), so a stopped gpucal leaves no bench running and
// the caller learns that it was asked to stop.
#pragma once
#include <functional>
#include <string>

namespace gpucal::calibration {

struct ChildResult {
  int status = 0;           // the command's exit code, or 128 + the signal that ended it; 127: no shell
  int signal_received = 0;  // SIGINT, SIGTERM or SIGHUP that gpucal received while it ran (0: none)
};

// `while_running`, when given, is called about once a second until the command ends (to draw
// progress); it must not block.
ChildResult run_shell_command(const std::string& command, const std::function<void()>& while_running = {});

}  // namespace gpucal::calibration
