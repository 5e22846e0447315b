// calibration.json: everything `gpucal fit` derives from a results folder, in one
// versioned document (schema in results/SCHEMA.md; built by app/fit/calibration_build.h). The
// exporters read this document, so a modeler can re-export from a calibration.json alone.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "app/common/results_dir.h"
#include "core/output/strict_json.h"

namespace gpucal::calibration {

// Bump on any change a reader could notice (renamed key, changed unit, changed meaning).
constexpr int kCalibrationSchemaVersion = 1;

// Writes pretty-printed JSON atomically (core/output/file_io.h); throws OpenError or WriteError.
void write_json_file(const nlohmann::json& document, const std::string& path);
// Reads and checks the file against the schema (calibration_schema.h): throws SchemaError
// naming the file and the JSON path, std::runtime_error for unreadable or malformed JSON.
nlohmann::json read_calibration_file(const std::string& path);
// Any JSON file, keys unique; throws std::runtime_error("PATH: why") when it is not a readable
// regular file of valid JSON.
nlohmann::json read_json_document(const std::string& path);

// A JSON parse error in words (core/output/strict_json.h).
using ::gpucal::json_parse_error_text;

}  // namespace gpucal::calibration
