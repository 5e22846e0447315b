// `gpucal run`: runs a suite's bench binaries into one results folder (the communication benches
// as launch_plan.h decides: threads on this node unless given a launcher or run inside an
// allocation), then fits (calibration.json), exports for every consumer (export/), predicts the
// suite's model step (predict.json), plots (plots/, when Python with matplotlib is there) and
// writes summary.md, which opens with the verdict. The terminal gets one line per bench (with
// progress while it runs, on a terminal only) and per step, then the verdict and where
// everything is; each tool's own output goes to logs/. A bench binary that is not built is
// reported and skipped; a bench that fails is reported and the run goes on.
#pragma once
#include <ostream>
#include <string>

namespace gpucal::calibration {

struct RunOptions {
  std::string suite = "smoke";
  std::string out_dir = "results";  // gpucal run without --out: results/SUITE (run_command.cpp)
  std::string backend = "auto";
  std::string bin_dir;      // empty: beside the gpucal binary and the build tree's bench folders
  std::string mpirun;       // launcher prefix for distributed benches, e.g. "mpirun -np 4 --oversubscribe"
  std::string threads;      // or: --threads for distributed benches (one process, a thread per GPU), e.g. "all"
  std::string gpucal_path;  // argv[0] resolved, to find benches and plots beside it
  bool plots = true;
  bool allow_suspect = false;
  int repeat_process = 1;  // each bench as this many separate processes, merged (app/run/process_runs.h)  // fit ok rows whose timings are suspect (left out by default)
};

// Returns the process exit code: 0, or 1 when a bench that exists failed or nothing was
// measured, 128 + the signal that stopped it. Progress lines are drawn when `log` is std::cout
// and stdout is a terminal.
// --threads as gpucal run takes it: empty, a count from 1 to 1024, all or auto; throws
// std::invalid_argument naming the flag otherwise (fleet run passes its --threads on).
void check_threads_flag(const std::string& threads);

int run_suite(const RunOptions& options, std::ostream& log);

}  // namespace gpucal::calibration
