// `gpucal import LOG... --out DIR [--ranks-per-node N] [--nranks N] [--device NAME] [--collective C]`:
// nccl-tests/rccl-tests (text or -J JSON) and OSU logs into a results folder.
#pragma once

#include <string>
#include <vector>

#include "app/common/command.h"
#include "app/import/import_log.h"

namespace gpucal::calibration {

class ImportCommand : public Command {
 public:
  explicit ImportCommand(std::vector<std::string> argv) : argv_(std::move(argv)) {}
  CLI::App* add_to(CLI::App& app) override;
  int run() override;

 private:
  std::vector<std::string> logs_, argv_;
  std::string out_dir_;
  ImportOptions options_;
};

}  // namespace gpucal::calibration
