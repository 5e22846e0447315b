#include "bench_gemm/gemm_autotune.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/output/csv_sink.h"
#include "core/output/file_io.h"
#include "core/output/row.h"

namespace gpucal::gemm {

AutotuneChoice choose_best(const std::vector<CandidateTiming>& candidates) {
  if (candidates.empty()) throw std::invalid_argument("choose_best: no candidates");
  if (candidates.front().index != 0) throw std::invalid_argument("choose_best: the heuristic's choice (index 0) comes first");
  AutotuneChoice c;
  c.heuristic_seconds = std::numeric_limits<double>::quiet_NaN();
  c.best_index = -1;
  std::string first_error;
  for (const auto& t : candidates) {
    ++c.timed;
    if (!t.valid) {
      if (first_error.empty()) first_error = "candidate " + std::to_string(t.index) + ": " + t.error;
      continue;
    }
    if (!(t.seconds > 0)) throw std::invalid_argument("choose_best: candidate times must be positive");
    ++c.valid;
    if (t.index == 0) c.heuristic_seconds = t.seconds;
    if (c.best_index < 0 || t.seconds < c.best_seconds) {
      c.best_index = t.index;
      c.best_seconds = t.seconds;
    }
  }
  if (c.best_index < 0) throw std::runtime_error("autotune: no candidate ran (" + first_error + ")");
  c.gain = c.heuristic_seconds / c.best_seconds;  // NaN propagates when the heuristic failed
  return c;
}

double BestSoFar::update(const std::string& key, double tflops, const std::string& point) {
  Entry& e = best_[key];
  ++e.rows;
  if (tflops > e.tflops) {
    e.tflops = tflops;
    e.point = point;
  }
  return e.tflops > 0 ? tflops / e.tflops : 0.0;
}

std::string BestSoFar::csv_text() const {
  std::string text = csv_record({"schema_version", "bench", "key", "best_tflops", "best_point", "rows"});
  for (const auto& [key, e] : best_)
    text += csv_record({std::to_string(kCsvSchemaVersion), "gemm", key, format_number(e.tflops), e.point,
                        std::to_string(e.rows)});
  return text;
}

void BestSoFar::write_csv(const std::string& path) const { write_file_atomic(path, csv_text()); }

}  // namespace gpucal::gemm
