// `gpucal compare BASELINE_DIR CURRENT_DIR [--threshold R] [--markdown F] [--junit F] [--json F]`.
#pragma once

#include <string>

#include "app/common/command.h"

namespace gpucal::calibration {

class CompareCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override;
  // 1 when a point regressed.
  int run() override;

 private:
  std::string baseline_, current_, markdown_, junit_, json_;
  double threshold_ = 0.05;
};

}  // namespace gpucal::calibration
