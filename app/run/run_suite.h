// `gpucal run`: runs a suite's bench binaries into one results folder, then fits
// (calibration.json), exports for every consumer (export/), plots (plots/, when Python with
// matplotlib is there) and writes summary.md. A bench binary that is not built is reported
// and skipped; a bench that fails is reported and the run goes on.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace gpucal::calibration {

struct RunOptions {
  std::string suite = "smoke";
  std::string out_dir = "results";
  std::string backend = "auto";
  std::string bin_dir;      // empty: beside the gpucal binary and the build tree's bench folders
  std::string mpirun;       // launcher prefix for distributed benches, e.g. "mpirun -np 4 --oversubscribe"
  std::string threads;      // or: --threads for distributed benches (one process, a thread per GPU), e.g. "all"
  std::string gpucal_path;  // argv[0] resolved, to find benches and plots beside it
  bool plots = true;
};

// Returns the process exit code: 0, or 1 when a bench that exists failed.
int run_suite(const RunOptions& options, std::ostream& log);

// A Python interpreter with matplotlib (/usr/bin/python3 first, then python3 on PATH), or
// empty; `why_not` then says what was tried.
std::string find_python_with_matplotlib(std::string& why_not);
// plots/ folder: $GPUCAL_PLOTS_DIR, beside the binary, or the source tree's.
std::string find_plots_dir(const std::string& gpucal_path);
std::string shell_quote(const std::string& arg);
// A bench binary (bench_gemm, ...) where `gpucal run` looks for it: under --bin-dir, else beside
// gpucal or in the build tree; "" when absent (`tried` then lists the paths looked at).
std::string find_bench_binary(const RunOptions& options, const std::string& binary, std::string* tried = nullptr);

}  // namespace gpucal::calibration
