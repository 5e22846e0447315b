#include "core/measure/progress.h"

#include <unistd.h>

#include <cstdio>

namespace gpucal {

Progress::Progress(int total, bool enabled)
    : total_(total), enabled_(enabled && isatty(STDERR_FILENO)), t0_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void Progress::start_point(const std::string& name) { draw(name); }

void Progress::finish_point() { ++done_; }

void Progress::draw(const std::string& name) {
  if (!enabled_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  if (elapsed < 3.0) return;
  const double eta = done_ > 0 ? elapsed / done_ * (total_ - done_) : 0;
  std::fprintf(stderr, "\r\033[K[%d/%d] %.60s  elapsed %.0fs  remaining ~%.0fs", done_ + 1, total_, name.c_str(),
               elapsed, eta);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace gpucal
