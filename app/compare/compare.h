// Comparison of two results folders, point by point: rows are matched on (bench, point),
// a point's Google Benchmark repetitions (`repetition` column) aggregated into one;
// a point is a regression when its time difference is statistically significant AND the
// current median is slower than the baseline's by more than the relative threshold, so
// noise is never a regression. Significance: two-sided Mann–Whitney U on the per-sample
// times (FILE.samples.csv) when both runs have at least kMinSamplesForUTest samples of the
// point, else "the [p10, p90] intervals of the two runs do not overlap". A point measured by
// several processes (gpucal run --repeat-process) is judged on the processes' medians instead
// (app/compare/process_compare.h): a change must exceed the spread between processes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/common/results_dir.h"

namespace gpucal::calibration {

struct CompareOptions {
  double threshold = 0.05;  // relative change of time_us_median that matters
  double alpha = 0.05;      // significance level of the U test
};

constexpr int kMinSamplesForUTest = 5;

enum class Verdict {
  regression,        // significant and slower by > threshold
  improvement,       // significant and faster by > threshold
  unchanged,         // not significant, or within the threshold
  suspect,           // ok in both, but a timing of either run is suspect (preempted): named, not judged
  status_changed,    // ok in one run, not ok in the other (a failure when the current one errs)
  not_compared,      // ok in neither run
  only_in_baseline,
  only_in_current,
};
const char* verdict_name(Verdict v);

struct PointComparison {
  std::string bench, point;
  Verdict verdict = Verdict::unchanged;
  bool is_failure = false;  // counts against the exit code / JUnit
  std::optional<double> baseline_median_us, current_median_us;
  std::optional<double> ratio;  // current / baseline median time (> 1: slower)
  std::string test;             // "mann-whitney-u", "p10-p90-disjoint" or ""
  std::optional<double> p_value;
  bool significant = false;
  std::string detail;
};

// One difference of device or software between the runs, matched by name: an array of named
// entries (loaded_libraries) is compared entry by entry, by its `name`, not by position; the
// same difference in several benches' sidecars is one change that lists them.
struct EnvironmentChange {
  std::string what;  // e.g. "device (csv column)", "loaded_libraries[libnccl.so.2]", "runtime.driver"
  std::string baseline, current;
  std::vector<std::string> where{};  // the files that show it: "gemm.json", "memory.csv", ...
};

struct CompareResult {
  CompareOptions options;
  std::string baseline_dir, current_dir;
  std::vector<EnvironmentChange> environment_changes;
  std::vector<PointComparison> points;
  int count(Verdict v) const;
  int failures() const;
  // "" when at least one point's times were compared; else why none was (two runs with no
  // point in common, or none ok in both): a comparison of nothing is a failure, not a pass.
  std::string nothing_compared() const;
};

CompareResult compare_runs(const ResultsDir& baseline, const ResultsDir& current, const CompareOptions& options);

// Differences in device/driver/library facts between two sidecars, flattened to
// "key.path" strings; volatile keys (times, clocks, temperatures, power, hosts, commands)
// are ignored. Exposed for tests.
// The changes, grouped: one per (what, baseline, current), `where` listing every file.
std::vector<EnvironmentChange> merge_changes(const std::vector<EnvironmentChange>& changes);
std::vector<EnvironmentChange> sidecar_changes(const std::string& label, const nlohmann::json& baseline,
                                               const nlohmann::json& current);

}  // namespace gpucal::calibration
