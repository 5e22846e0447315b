// One line on stderr while a sweep runs: points done of total, the current point, elapsed
// and estimated remaining time. Silent when stderr is not a terminal, with --quiet, or
// during the first few seconds.
#pragma once

#include <chrono>
#include <string>

namespace gpucal {

class Progress {
 public:
  Progress(int total, bool enabled);
  ~Progress();
  void start_point(const std::string& name);
  void finish_point();

 private:
  void draw(const std::string& name);
  int total_, done_ = 0;
  bool enabled_, drawn_ = false;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace gpucal
