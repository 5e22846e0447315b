#include "app/fleet/step_pool.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "app/history/robust_stats.h"

extern char** environ;

namespace gpucal::fleet {

namespace {

volatile sig_atomic_t g_stop_signal = 0;
void on_stop(int sig) { g_stop_signal = sig; }

using Clock = std::chrono::steady_clock;
constexpr double kKillGraceS = 10;
constexpr double kGiveUpS = 30;  // after SIGKILL: a process stuck in the kernel is left behind

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Running {
  pid_t pid = 0;
  std::string private_tmpdir;  // removed when the step ends
  Clock::time_point start, term_sent, kill_sent;
  bool terminated = false, killed = false, done = false;
  double deadline_s = 0;
};

// A fresh folder for the step's private_tmpdir_variable ("" when none is asked for or none can
// be made: the step then runs as it would without).
std::string make_private_tmpdir(const Step& step) {
  if (step.private_tmpdir_variable.empty()) return "";
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/gpucal-step.XXXXXX";
  return ::mkdtemp(templ.data()) ? templ : "";
}

pid_t spawn(const Step& step, const std::string& private_tmpdir) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (private_tmpdir.empty() || std::strncmp(*e, (step.private_tmpdir_variable + "=").c_str(), step.private_tmpdir_variable.size() + 1) != 0)
      env_text.emplace_back(*e);
  if (!private_tmpdir.empty()) env_text.push_back(step.private_tmpdir_variable + "=" + private_tmpdir);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, step.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  const char* argv[] = {"sh", "-c", step.command.c_str(), nullptr};
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, "/bin/sh", &files, &attr, const_cast<char* const*>(argv), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&files);
  return rc == 0 ? pid : -1;
}

// Deadlines shortened for stragglers once enough steps ended.
void apply_straggler_rule(std::vector<Running>& run, const std::vector<StepOutcome>& out, const StragglerRule& rule) {
  std::vector<double> ended;
  for (std::size_t i = 0; i < run.size(); ++i)
    if (run[i].done && !out[i].timed_out) ended.push_back(out[i].seconds);
  if (ended.empty() || static_cast<double>(ended.size()) < rule.fraction * static_cast<double>(run.size())) return;
  const double limit = std::max(rule.min_s, rule.factor * *median(ended));
  for (auto& r : run)
    if (!r.done) r.deadline_s = std::min(r.deadline_s, limit);
}

void stop(Running& r, bool& any_alive) {
  if (!r.terminated) {
    ::kill(-r.pid, SIGTERM);
    r.terminated = true;
    r.term_sent = Clock::now();
  } else if (!r.killed && since(r.term_sent) > kKillGraceS) {
    ::kill(-r.pid, SIGKILL);
    r.killed = true;
    r.kill_sent = Clock::now();
  } else if (r.killed && since(r.kill_sent) > kGiveUpS) {
    r.done = true;  // not reaped: a zombie at worst, gpucal does not wait for ever
    return;
  }
  any_alive = true;
}

class StopHandlers {
 public:
  StopHandlers() {
    struct sigaction handler {};
    handler.sa_handler = on_stop;
    sigemptyset(&handler.sa_mask);
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &handler, &previous_[i]);
  }
  ~StopHandlers() {
    for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &previous_[i], nullptr);
  }

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction previous_[3];
};

}  // namespace

int stop_signal_received() { return g_stop_signal; }

std::vector<StepOutcome> run_steps(const std::vector<Step>& steps, const std::optional<StragglerRule>& stragglers) {
  StopHandlers handlers;
  std::vector<StepOutcome> out(steps.size());
  std::vector<Running> run(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    run[i].start = Clock::now();
    run[i].deadline_s = steps[i].timeout_s;
    run[i].private_tmpdir = g_stop_signal ? "" : make_private_tmpdir(steps[i]);
    run[i].pid = g_stop_signal ? -1 : spawn(steps[i], run[i].private_tmpdir);
    if (run[i].pid < 0) run[i].done = true, out[i].interrupted = g_stop_signal != 0;
  }
  for (bool any_alive = true; any_alive;) {
    any_alive = false;
    for (std::size_t i = 0; i < run.size(); ++i) {
      Running& r = run[i];
      if (r.done) continue;
      int status = 0;
      const pid_t w = ::waitpid(r.pid, &status, WNOHANG);
      if (w == r.pid || (w < 0 && errno == ECHILD)) {
        r.done = true;
        out[i].status = w == r.pid ? (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) : 128 + SIGKILL;
        out[i].seconds = since(r.start);
        continue;
      }
      if (g_stop_signal && !r.terminated) out[i].interrupted = true;
      if (!g_stop_signal && !r.terminated && since(r.start) > r.deadline_s) out[i].timed_out = true;
      if (r.terminated || out[i].interrupted || out[i].timed_out) stop(r, any_alive);
      else any_alive = true;
      if (r.done) out[i].seconds = since(r.start);
    }
    if (stragglers) apply_straggler_rule(run, out, *stragglers);
    if (any_alive) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (const Running& r : run)
    if (!r.private_tmpdir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(r.private_tmpdir, ec);  // best effort: a leftover is an empty folder in /tmp
    }
  return out;
}

}  // namespace gpucal::fleet
