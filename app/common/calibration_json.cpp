#include "app/common/calibration_json.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "app/common/calibration_schema.h"
#include "core/output/file_io.h"
#include "core/output/strict_json.h"

namespace gpucal::calibration {

using nlohmann::json;

void write_json_file(const json& document, const std::string& path) { write_file_atomic(path, document.dump(2) + "\n"); }

json read_json_document(const std::string& path) {
  if (const std::string why = not_a_regular_file(path); !why.empty()) throw std::runtime_error(path + ": " + why);
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  json doc;
  std::stringstream text;
  text << in.rdbuf();
  try {
    doc = parse_json_unique_keys(text.str());
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": malformed JSON: " + json_parse_error_text(e));
  } catch (const DuplicateKeyError& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return doc;
}

json read_calibration_file(const std::string& path) {
  json doc = read_json_document(path);
  validate_calibration(doc, path);
  return doc;
}

}  // namespace gpucal::calibration
