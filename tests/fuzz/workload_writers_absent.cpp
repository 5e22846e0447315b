// fuzz_calibration_json builds the export registry with the hardware writers only: the workload
// writers (app/export/export_chakra.cpp, export_simai.cpp) need the model derivation, gpucal
// predict and protobuf, and a fuzzed calibration never comes with a step (--model), so export_to
// leaves them out. These definitions satisfy the registry's references and refuse if called;
// the hardware writers' workload-aware refits (app/export/workload_refit.h) run only with a step,
// so here they are never reached and end the fuzz run if they were.
#include <cstdlib>

#include "app/export/export_common.h"
#include "app/export/workload_refit.h"

namespace gpucal::calibration {

namespace {
ExportReport absent(const char* consumer) {
  ExportReport r;
  r.consumer = consumer;
  r.refused.push_back("the workload writers are not built into this fuzz target");
  return r;
}
}  // namespace

ExportReport export_chakra(const nlohmann::json&, const ExportSettings&, const std::string&) {
  return absent("chakra");
}
ExportReport export_simai(const nlohmann::json&, const ExportSettings&, const std::string&) {
  return absent("simai");
}
void refit_nersc(const ExportWorkload&, int64_t, nlohmann::json&, ExportReport&) { std::abort(); }
void refit_calculon(const ExportWorkload&, nlohmann::json&, ExportReport&) { std::abort(); }
void refit_astrasim(const ExportWorkload&, AstraSimFields&, ExportReport&) { std::abort(); }
void refit_vtrain(const ExportWorkload&, nlohmann::json&, ExportReport&) { std::abort(); }

}  // namespace gpucal::calibration
