// The verdict summary.md opens with and `gpucal run` ends with: each bench ok or not, each
// export written or refused, the predicted step, how well each communication fit predicts sizes
// it was not fitted to against log-log interpolation of its own points, and which measured
// figures are below half of what this device should do (its recorded peak).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/run/run_record.h"

namespace gpucal::calibration {

// One communication group's held-out error (every third measured size left out, predicted by
// the form chosen on the others: cv_selection.h) beside log-log interpolation's on those sizes.
// At least as good as interpolation: within kAsGoodRatio of its error, or kAsGoodPoints points.
constexpr double kAsGoodRatio = 1.1, kAsGoodPoints = 2.0;
struct FitVerdict {
  std::string group;          // "allreduce fp32 n4", "sendrecv shm"
  std::string form;           // the form chosen on the training split (best.selection_heldout)
  std::string exported_form;  // the form chosen on every size, which the exports use (best.form)
  int sizes = 0;
  double fit_pct = 0, loglog_pct = 0;
  bool as_good() const { return fit_pct <= std::max(kAsGoodRatio * loglog_pct, loglog_pct + kAsGoodPoints); }
};
std::vector<FitVerdict> fit_verdicts(const nlohmann::json& calibration);

// A measured figure beside the device's peak for it (GEMM and vector rates, memory bandwidth,
// attention); peak 0 when none is recorded.
struct PeakVerdict {
  std::string figure, unit, peak_source;
  double best = 0, peak = 0;
  bool below_half() const { return peak > 0 && best < 0.5 * peak; }
};
// Peak sources and the memory peak are read from the bench CSVs in `results_dir`.
std::vector<PeakVerdict> peak_verdicts(const nlohmann::json& calibration, const std::string& results_dir);

// What the run was to deliver and did not: a bench failed or not built, nothing measured, the
// fit, an applicable export, the predicted step. A bench skipped for want of a group on a
// one-rank run, and the exports that need one there, are not applicable, not missing.
struct Completeness {
  std::vector<std::string> missing;  // one phrase each, in the order of the run
  bool bench_failed = false;         // a bench failed or was not built, or nothing was measured
  // Deliverables are missing and rows a busy machine spoiled were left out: rerun on a quiet
  // machine (rather than a fault of the node or of gpucal).
  bool spoiled = false;
  bool complete() const { return missing.empty(); }
};
Completeness completeness(const RunRecord& record);

// `gpucal run`'s exit code: 0 complete; 1 a bench failed, nothing was measured or a deliverable
// is missing; 4 deliverables are missing because suspect rows were left out (rerun quietly).
constexpr int kExitRunSpoiled = 4;
int run_exit_code(const Completeness& c);

// The verdict as sentences, one per aspect (benches, exports, predicted step, fits, peaks, and
// on the host backend the stand-ins); Markdown-free so the terminal prints them as they are.
std::vector<std::string> verdict_lines(const RunRecord& record);

// j[key] where j is an object holding it, else an empty object: a reference that outlives the
// loop it is iterated in (json::value returns a copy).
const nlohmann::json& member(const nlohmann::json& j, const char* key);

// j[key] when it is a string, else `fallback`: a calibration's fields may be null (a group of
// one size has no best form), and json::value throws on a null it was asked a string of.
std::string text_of(const nlohmann::json& j, const char* key, const std::string& fallback);

std::string percent(double fraction);  // "12.3%", "0.61%"
std::string number(double value);      // 4 significant digits
// A predict.json breakdown's throughput: "1.234e+05 tokens/s", or "no tokens/s (operations left
// out)" where the prediction left operations out (--allow-missing) and gave none.
std::string tokens_per_s_text(const nlohmann::json& breakdown);
// Its MFU: "12.3%", or "n/a" where it has none (no peak, or operations left out).
std::string mfu_text(const nlohmann::json& breakdown);
std::string error_pct(double pct);     // "49.2%": 3 significant digits
std::string duration(double seconds);  // "123.4 ms" below a second, else "14.23 s"

}  // namespace gpucal::calibration
