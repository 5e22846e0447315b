#include "core/driver/rank_fault.h"

#include <chrono>
#include <csignal>
#include <regex>
#include <thread>

#include "core/errors.h"
#include "core/output/file_io.h"

namespace gpucal {

RankFault parse_rank_fault(const std::string& text) {
  RankFault f;
  if (text.empty()) return f;
  const std::regex re("(hang|kill)-rank=([0-9]{1,6})(@([0-9]{1,6}))?|hang-sink(@([0-9]{1,6}))?");
  std::smatch m;
  if (!std::regex_match(text, m, re))
    throw UsageError(
        "--inject-rank-fault: expected hang-rank=R[@P], kill-rank=R[@P] or hang-sink[@P], got '" + text +
        "'");
  if (m[1].matched) {
    f.kind = m[1];
    f.rank = std::stoi(m[2]);
    if (m[4].matched) f.point = std::stoi(m[4]);
  } else {
    f.kind = "hang-sink";
    f.rank = 0;
    if (m[6].matched) f.point = std::stoi(m[6]);
  }
  return f;
}

void hang_forever(const std::string& prog, int rank, const std::string& what) {
  write_stderr_line(prog + ": rank " + std::to_string(rank) + ": injected fault: " + what);
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

std::function<void()> launch_fault_hook(const RankFault& fault, const std::string& prog, int rank,
                                        const int& points_run) {
  if ((fault.kind != "hang" && fault.kind != "kill") || fault.rank != rank) return nullptr;
  return [&fault, prog, rank, &points_run, fired = false]() mutable {
    if (fired || points_run != fault.point) return;
    fired = true;
    if (fault.kind == "kill") {
      write_stderr_line(prog + ": rank " + std::to_string(rank) + ": injected fault: kill");
      std::raise(SIGKILL);
    }
    hang_forever(prog, rank, fault.kind);
  };
}

}  // namespace gpucal
