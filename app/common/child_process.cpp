#include "app/common/child_process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

extern char** environ;

namespace gpucal::calibration {

namespace {
// What the handler sees: the running child's process group, the last signal received.
// (A signal handler can reach nothing else.)
volatile sig_atomic_t g_child_group = 0;
volatile sig_atomic_t g_received = 0;

void pass_on(int sig) {
  g_received = sig;
  if (g_child_group > 0) ::kill(-static_cast<pid_t>(g_child_group), sig);
}

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

// waitpid's status of `pid`; with `tick`, polled every 100 ms and `tick` called every second.
int wait_for(pid_t pid, const std::function<void()>& tick) {
  int status = 0;
  if (!tick) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }
  for (int polls = 1;; ++polls) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return status;
    ::usleep(100 * 1000);
    if (polls % 10 == 0) tick();
  }
}
}  // namespace

ChildResult run_shell_command(const std::string& command, const std::function<void()>& while_running) {
  sigset_t forwarded, previous_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) sigaddset(&forwarded, sig);
  // Blocked until the child's group is known: a signal in between is delivered, and passed on,
  // right after.
  ::sigprocmask(SIG_BLOCK, &forwarded, &previous_mask);
  struct sigaction handler {}, previous[3];
  handler.sa_handler = pass_on;
  sigemptyset(&handler.sa_mask);
  for (int i = 0; i < 3; ++i) ::sigaction(kForwarded[i], &handler, &previous[i]);
  g_received = 0;

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigdefault(&attr, &forwarded);  // the child takes them the default way
  posix_spawnattr_setsigmask(&attr, &previous_mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, "/bin/sh", nullptr, &attr, const_cast<char* const*>(argv), environ);
  posix_spawnattr_destroy(&attr);

  ChildResult result;
  if (spawned != 0) {
    result.status = 127;
  } else {
    g_child_group = pid;
    ::sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
    const int status = wait_for(pid, while_running);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ::sigprocmask(SIG_BLOCK, &forwarded, nullptr);
  g_child_group = 0;
  result.signal_received = g_received;
  for (int i = 0; i < 3; ++i) ::sigaction(kForwarded[i], &previous[i], nullptr);
  ::sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
  return result;
}

}  // namespace gpucal::calibration
