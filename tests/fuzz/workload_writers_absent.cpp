// fuzz_calibration_json builds the export registry with the hardware writers only: the workload
// writers (app/export/export_chakra.cpp, export_simai.cpp) need the model derivation, gpucal
// predict and protobuf, and a fuzzed calibration never comes with a step (--model), so export_to
// leaves them out. These definitions satisfy the registry's references and refuse if called.
#include "app/export/export_common.h"

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

}  // namespace gpucal::calibration
