#include "core/measure/watchdog.h"

#include <algorithm>
#include <chrono>

namespace gpucal {

Watchdog::Watchdog(double timeout_s, std::function<void(const std::string&, double)> report,
                   std::function<void()> end_process)
    : timeout_s_(timeout_s), report_(std::move(report)), end_process_(std::move(end_process)) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { loop(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::arm(const std::string& what) {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  what_ = what;
  armed_ = true;
  ++generation_;
}

void Watchdog::disarm() {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
  ++generation_;
}

void Watchdog::add_abort_hook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(mu_);
  hooks_.push_back(std::move(hook));
}

void Watchdog::loop() {
  using clock = std::chrono::steady_clock;
  const auto poll = std::chrono::duration<double>(std::clamp(timeout_s_ / 10, 0.01, 1.0));
  uint64_t seen_generation = ~uint64_t{0}, seen_beats = 0;
  auto last_progress = clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, poll);
    if (stopping_) break;
    const uint64_t beats = beats_.load(std::memory_order_relaxed);
    if (!armed_ || generation_ != seen_generation || beats != seen_beats) {
      seen_generation = generation_;
      seen_beats = beats;
      last_progress = clock::now();
      continue;
    }
    const double stalled = std::chrono::duration<double>(clock::now() - last_progress).count();
    if (stalled < timeout_s_) continue;
    const std::string what = what_;
    auto hooks = hooks_;
    lock.unlock();
    if (report_) report_(what, stalled);
    for (auto& h : hooks) h();
    if (end_process_) end_process_();
    return;  // end_process does not return; if it did, watch no more
  }
}

}  // namespace gpucal
