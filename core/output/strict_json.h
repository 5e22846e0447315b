// JSON read from outside (a model description, an nccl-tests -J log, calibration.json) with
// every object's keys unique: nlohmann::json keeps the last of two equal keys without a word,
// so `{"layers": 32, "layers": 80}` would be read as 80 layers. A repeated key is refused.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpucal {

class DuplicateKeyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws nlohmann::json::parse_error for malformed text, DuplicateKeyError ("$.a.b: key 'x'
// appears twice") for a repeated key.
inline nlohmann::json parse_json_unique_keys(const std::string& text) {
  using json = nlohmann::json;
  struct Open {
    bool array;
    std::string path;  // $.a.b, $.results[] (any element of results)
    std::set<std::string> keys;
  };
  std::vector<Open> open;
  std::string last_key, duplicate;
  auto check = [&](int, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (event == E::object_start || event == E::array_start) {
      const std::string path = open.empty()       ? "$"
                               : open.back().array ? open.back().path + "[]"
                                                   : open.back().path + "." + last_key;
      open.push_back({event == E::array_start, path, {}});
    } else if (event == E::object_end || event == E::array_end) {
      open.pop_back();
    } else if (event == E::key) {
      last_key = parsed.get<std::string>();
      if (!open.back().keys.insert(last_key).second && duplicate.empty())
        duplicate = open.back().path + ": key '" + last_key + "' appears twice";
    }
    return true;
  };
  json doc = json::parse(text, check);
  if (!duplicate.empty()) throw DuplicateKeyError(duplicate);
  return doc;
}

// A JSON parse error in words, without the library's "[json.exception.parse_error.101] parse
// error at" prefix: "line 1, column 2: syntax error while parsing value - invalid literal".
inline std::string json_parse_error_text(const std::exception& e) {
  std::string text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const auto close = text.find("] ");
    if (close != std::string::npos) text.erase(0, close + 2);
  }
  for (const char* lead : {"parse error at ", "parse error: "})
    if (text.rfind(lead, 0) == 0) text.erase(0, std::string(lead).size());
  return text;
}

}  // namespace gpucal
