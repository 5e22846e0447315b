// Bookkeeping around measured times, kept free of any GPU so it is unit-tested on its own:
// choosing the fastest autotune candidate (and the gain over the heuristic's first choice),
// and the best GEMM of each dtype seen so far in a run (efficiency_vs_best_so_far and the
// end-of-run FILE.best.csv summary).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpucal::gemm {

// One timed candidate. Index 0 is the heuristic's first choice (what frameworks get);
// invalid candidates (the library refused to run them) carry the reason.
struct CandidateTiming {
  int index = 0;
  double seconds = 0;
  bool valid = false;
  std::string error;
};

struct AutotuneChoice {
  int best_index = 0;
  double best_seconds = 0;
  double heuristic_seconds = 0;  // NaN when the heuristic's choice could not run
  int timed = 0;                 // candidates tried
  int valid = 0;                 // candidates that ran
  double gain = 0;               // heuristic_seconds / best_seconds (>= 1); NaN without heuristic
};

// The fastest valid candidate; ties go to the lower index (the heuristic's order). Throws
// std::invalid_argument for an empty list, a list not starting at index 0, or a
// non-positive time, and std::runtime_error (with the first error) when none ran.
AutotuneChoice choose_best(const std::vector<CandidateTiming>& candidates);

// The best throughput per key (dtype and output type) among the rows so far.
class BestSoFar {
 public:
  struct Entry {
    double tflops = 0;
    std::string point;
    int rows = 0;  // rows offered under this key
  };
  // Records a plausible, verified row and returns tflops / best-so-far (including this row),
  // so the first row of a key and every new best get 1.
  double update(const std::string& key, double tflops, const std::string& point);
  const std::map<std::string, Entry>& entries() const { return best_; }
  // key,best_tflops,best_point,rows — one line per key.
  std::string csv_text() const;
  // csv_text() written atomically; throws std::runtime_error when the file cannot be written.
  void write_csv(const std::string& path) const;

 private:
  std::map<std::string, Entry> best_;
};

}  // namespace gpucal::gemm
