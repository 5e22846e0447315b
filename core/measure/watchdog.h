// A thread that ends a run which stopped making progress: a collective that never
// completes (a dead or stuck peer, a wedged network) would otherwise hang every rank.
// The driver arms it around each phase of a point and beats once per launch; when no beat
// arrives for `timeout` seconds it runs the abort hooks (communicators register theirs:
// ncclCommAbort, ...) and then `on_expire`, which reports and ends the process.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpucal {

class Watchdog {
 public:
  // timeout_s <= 0 disables it. Both callbacks run on the watchdog thread; `end_process`
  // must not return (MPI_Abort, _Exit).
  Watchdog(double timeout_s, std::function<void(const std::string& what, double seconds)> report,
           std::function<void()> end_process);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  bool enabled() const { return timeout_s_ > 0; }
  double timeout_s() const { return timeout_s_; }
  void arm(const std::string& what);  // starts (or restarts) the clock for this step
  void beat() { beats_.fetch_add(1, std::memory_order_relaxed); }  // progress: cheap
  void disarm();
  // Runs on expiry, after report, in registration order (e.g. ncclCommAbort).
  void add_abort_hook(std::function<void()> hook);

 private:
  void loop();
  double timeout_s_;
  std::function<void(const std::string&, double)> report_;
  std::function<void()> end_process_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string what_;
  bool armed_ = false, stopping_ = false;
  uint64_t generation_ = 0;  // bumped by arm(): a new step restarts the clock
  std::atomic<uint64_t> beats_{0};
  std::vector<std::function<void()>> hooks_;
  std::thread thread_;
};

}  // namespace gpucal
