// What one `gpucal run` did, gathered as it goes, for summary.md and the closing lines on the
// terminal (verdict.h, summary.h).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/export/export_common.h"
#include "app/run/stand_ins.h"
#include "app/run/suites.h"

namespace gpucal::calibration {

struct BenchOutcome {
  std::string bench, command;
  std::string status;         // ok | failed (exit N) | not built | skipped
  std::string detail;         // why it failed or was skipped; empty when ok
  double seconds = -1;        // the bench's wall time; < 0: it did not run
  int rows = 0, ok_rows = 0;  // points written, and those measured (status ok)
  bool ok() const { return status == "ok"; }
};

struct PredictOutcome {
  std::string command;
  std::string path;       // predict.json when written
  std::string why_not;    // why no step was predicted
  nlohmann::json result;  // predict.json's content
};

struct RunRecord {
  const Suite* suite = nullptr;
  std::string out_dir, backend_requested;
  std::string launch;      // what started the communication benches
  std::string single_rank;  // non-empty: one rank, no group to measure (launch_plan.h), why
  // The step the run predicts and the workload exports write: the suite's, laid out on one
  // rank when the run has one (one_gpu_layout); empty: none.
  std::vector<std::string> predict_args;
  std::string predict_label;
  std::string stopped_by;  // SIGINT, ...; empty: ran to the end
  std::vector<BenchOutcome> benches;
  nlohmann::json calibration;  // null when nothing was fitted
  std::string fit_error;
  bool allow_suspect = false;  // --allow-suspect: the fit uses rows with suspect timings
  size_t suspect_rows = 0;     // ok rows whose timings are suspect (core/measure/preemption.h)
  std::vector<ExportReport> exports;
  // Exports that need a communication group, refused on a one-rank run (ExportTarget::needs_group):
  // not applicable there, so not counted as missing. Their reports stay in `exports`.
  std::vector<std::string> exports_not_applicable;
  // Of those, the GPU-only exports on a host-backend run (ExportTarget::gpu_only).
  std::vector<std::string> exports_not_for_host;
  // Exports written for the suite's step (--model and the layout flags of predict_args): the
  // workload targets and those a tool runs with them (ExportTarget::runs_with).
  std::vector<std::string> exports_for_step;
  std::string export_error;
  std::vector<StandIn> stand_ins;
  PredictOutcome predict;
  std::string plots;  // what happened to the plots, in words
  int plot_files = 0;

  // The device the benches ran on, from the first sidecar naming one ("host", "cuda", "hip" and
  // its name); empty when no bench wrote a sidecar.
  std::string device_field(const std::string& field) const { return calibration_device_field(calibration, field); }
};

}  // namespace gpucal::calibration
