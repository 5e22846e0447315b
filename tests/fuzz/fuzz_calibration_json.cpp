// libFuzzer target: reading calibration.json (app/common/calibration_schema.h) and
// exporting it. Any document either fails the schema check (SchemaError) or exports for every
// consumer without a crash, an exception or undefined behaviour.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "app/common/calibration_schema.h"
#include "app/export/export_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  try {
    gpucal::calibration::validate_calibration(doc, "fuzz.json");
  } catch (const gpucal::calibration::SchemaError&) {
    return 0;
  }
  static const std::string out = [] {
    const char* shm = "/dev/shm";
    const std::string base = std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path().string();
    return base + "/gpucal_fuzz_export." + std::to_string(getpid());
  }();
  gpucal::calibration::export_to(doc, "all", out);  // an exception here is a finding: libFuzzer reports it
  return 0;
}
