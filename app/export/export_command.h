// `gpucal export RESULTS_DIR|calibration.json --to TARGET|all [-o DIR] [--set KEY=VALUE ...]
// [--model NAME ... layout and policy flags]`: the inputs of the export registry's consumers
// (app/export/export_registry.h); the workload targets also take the step
// (app/export/export_workload_flags.h).
#pragma once

#include <string>
#include <vector>

#include "app/common/command.h"
#include "app/export/export_workload_flags.h"

namespace gpucal::calibration {

class ExportCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override;
  // 2 when an export was refused (after writing the others).
  int run() override;

 private:
  std::string source_, target_, out_dir_;
  std::vector<std::string> set_items_;
  bool allow_suspect_ = false;
  bool verbose_ = false;  // every note and assumption on the terminal, not only in NOTES.md
  ExportWorkloadFlags workload_;
};

}  // namespace gpucal::calibration
