// The calibration.json schema as the exporters and `gpucal run` read it, checked when a
// file is read: a missing key, a wrong type, an empty measured curve or a non-finite number
// is one line naming the file and the JSON path ($.communication.collectives[2].points),
// instead of a crash or a wrong number later. Keys this gpucal does not read are allowed
// (a newer writer may add some); calibration_schema_version is checked first.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace gpucal::calibration {

class SchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws SchemaError "SOURCE: $.path: what"; `source` names the file.
void validate_calibration(const nlohmann::json& doc, const std::string& source);

// Why a bench's rows may be missing from `calibration`: " (N ok gemm row(s) were left out: their
// timings are suspect ...; rerun on a quiet machine, or pass --allow-suspect)", or "" when the
// fit left none out. Appended to the "no rows" refusals of the exports and predict.
std::string left_out_as_suspect(const nlohmann::json& calibration, const std::string& bench);

// A collectives group from a log that names no hosts (spans_nodes -1, nnodes and ranks_per_node
// 0) is in no link tier; what makes it one, said wherever such a group is refused or listed.
inline const char* const kNodesUnknownRemedy = "import it again with --ranks-per-node N";

}  // namespace gpucal::calibration
