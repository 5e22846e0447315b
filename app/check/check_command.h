// `gpucal check RESULTS --expect auto|FILE [--junit F] [--json F] [--markdown F] [--prometheus F]`: a results
// folder's headline figures (app/report/node_metrics.h) against a SKU's expectations, as a
// pass/fail table. `auto` picks the SKU from the sidecars' device name and backend. Exit 1 when
// a figure misses its floor, 2 on bad input (no SKU matches, an invalid file).
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "app/check/expectations.h"

namespace gpucal::check {

struct CheckOptions {
  std::string results_dir;
  std::string expect = "auto";
  std::string junit, json, markdown;
  std::string prometheus;  // node_exporter textfile collector (.prom): gpucal_check_ok, gpucal_check_status
};

int run_check(const CheckOptions& options, std::ostream& out);

// The expectations for a folder measured on `device_name`/`backend`: `expect` is "auto" (the
// shipped folder) or a file. Throws std::invalid_argument when nothing matches.
Expectations resolve_expectations(const std::string& expect, const std::string& device_name,
                                  const std::string& backend);

std::string format_check_table(const std::vector<CheckLine>& lines);
std::string format_check_markdown(const std::string& title, const std::vector<CheckLine>& lines);

}  // namespace gpucal::check
