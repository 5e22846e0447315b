// `gpucal list [WHAT] [--markdown]`: the registries' rows (app/list/registry_listings.h). Without
// WHAT, each registry and its row count; with it, that registry's rows as an aligned table, or a
// GitHub markdown table with --markdown (the docs' generated tables, docs/extending.md).
#pragma once

#include <string>

#include "app/common/command.h"

namespace gpucal::calibration {

class ListCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override;
  int run() override;

 private:
  const CLI::App* gpucal_ = nullptr;
  std::string what_;
  std::string form_ = "text";
};

}  // namespace gpucal::calibration
