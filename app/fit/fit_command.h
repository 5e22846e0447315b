// `gpucal fit RESULTS_DIR [-o FILE] [--report]`: calibration.json from a results folder.
#pragma once

#include <string>

#include "app/common/command.h"

namespace gpucal::calibration {

class FitCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override;
  int run() override;

 private:
  std::string results_dir_, out_path_;
  bool report_ = false;
  bool allow_suspect_ = false;
};

}  // namespace gpucal::calibration
