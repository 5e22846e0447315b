// `gpucal run --suite NAME [--out DIR] [--backend B] [--bin-dir DIR] [--mpirun "..." | --threads N]
// [--no-plots]`: a suite of benches into one results folder, then fit, export, plot, summary.
#pragma once

#include <CLI/CLI.hpp>

#include "app/common/command.h"
#include "app/run/run_suite.h"

namespace gpucal::calibration {

class RunCommand : public Command {
 public:
  explicit RunCommand(std::string gpucal_path) { options_.gpucal_path = std::move(gpucal_path); }
  CLI::App* add_to(CLI::App& app) override;
  int run() override;

 private:
  RunOptions options_;
  bool no_plots_ = false;
  CLI::Option* out_opt_ = nullptr;
};

}  // namespace gpucal::calibration
