#include "app/check/expectations.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "app/common/calibration_json.h"
#include "app/report/junit.h"
#include "core/formulas/peaks.h"
#include "core/output/file_io.h"
#include "core/output/strict_json.h"

#ifndef GPUCAL_SOURCE_EXPECTATIONS_DIR
#define GPUCAL_SOURCE_EXPECTATIONS_DIR ""
#endif

namespace gpucal::check {

namespace {
constexpr std::size_t kMaxDeviceRegexChars = 256;
constexpr int kMaxDeviceRegexDepth = 16;
}  // namespace

namespace fs = std::filesystem;
using nlohmann::json;

bool meets(double value, double limit, fleet::Better better) {
  return better == fleet::Better::higher ? value >= limit : value <= limit;
}

namespace {

[[noreturn]] void invalid(const std::string& path, const std::string& what) {
  throw std::invalid_argument(path + ": " + what);
}

std::string string_field(const json& j, const std::string& key, const std::string& path, const std::string& where,
                         bool required = true) {
  if (!j.contains(key) || j[key].is_null()) {
    if (required) invalid(path, where + "'" + key + "' is missing");
    return "";
  }
  if (!j[key].is_string()) invalid(path, where + "'" + key + "' must be a string");
  return j[key].get<std::string>();
}

// A figure: {"value": number or null, "source": "..."}; a null value needs a source saying why.
Figure figure(const json& m, const std::string& key, const std::string& path, const std::string& where) {
  Figure f;
  if (!m.contains(key)) return f;
  const json& j = m[key];
  if (!j.is_object()) invalid(path, where + "'" + key + "' must be an object {value, source}");
  if (j.contains("value") && !j["value"].is_null()) {
    if (!j["value"].is_number()) invalid(path, where + key + ".value must be a number or null");
    f.value = j["value"].get<double>();
    if (!std::isfinite(*f.value) || *f.value <= 0) invalid(path, where + key + ".value must be positive");
  }
  f.source = string_field(j, "source", path, where + key + ".");
  if (f.source.empty()) invalid(path, where + key + ".source is empty: cite the figure or say 'no published figure'");
  return f;
}

MetricExpectation metric(const std::string& id, const json& m, const std::string& path) {
  const std::string where = "metrics." + id + ": ";
  if (!m.is_object()) invalid(path, where + "must be an object");
  MetricExpectation e;
  e.id = id;
  e.unit = string_field(m, "unit", path, where);
  e.what = string_field(m, "what", path, where, false);
  try {
    e.better = fleet::better_from_string(string_field(m, "better", path, where));
  } catch (const std::invalid_argument& x) {
    invalid(path, where + x.what());
  }
  const fleet::MetricKind kind = fleet::metric_kind(id);
  if (kind.known && (kind.unit != e.unit || kind.better != e.better))
    invalid(path, where + "gpucal measures " + id + " in " + kind.unit + ", " + to_string(kind.better) + " is better");
  e.typical = figure(m, "typical", path, where);
  e.floor = figure(m, "floor", path, where);
  e.peak = figure(m, "peak", path, where);
  if (e.floor.value && e.typical.value && !meets(*e.typical.value, *e.floor.value, e.better))
    invalid(path, where + "the typical value does not meet the floor");
  return e;
}

}  // namespace

// "health": {"gpu_pcie": {"generation": G, "width": W, "source": S}, "gpu_nvlink": {"links": N, "source": S}}
static HealthExpectation health_expectation(const json& h, const std::string& path) {
  if (!h.is_object()) invalid(path, "'health' must be an object {gpu_pcie, gpu_nvlink}");
  HealthExpectation out;
  auto count = [&](const json& o, const char* key, const std::string& where) {
    if (!o.contains(key) || !o[key].is_number_integer() || o[key].get<long long>() < 1 || o[key].get<long long>() > 1024)
      invalid(path, where + key + ": expected a whole number from 1 to 1024");
    return o[key].get<int>();
  };
  for (const auto& [key, o] : h.items()) {
    const std::string where = "health." + key + ".";
    if (!o.is_object()) invalid(path, "health." + key + " must be an object");
    if (key == "gpu_pcie") {
      out.pcie_generation = count(o, "generation", where);
      out.pcie_width = count(o, "width", where);
      out.pcie_source = string_field(o, "source", path, where);
    } else if (key == "gpu_nvlink") {
      out.nvlink_links = count(o, "links", where);
      out.nvlink_source = string_field(o, "source", path, where);
    } else {
      invalid(path, "health." + key + ": unknown (expected gpu_pcie or gpu_nvlink)");
    }
  }
  return out;
}

Expectations parse_expectations(const json& doc, const std::string& path) {
  if (!doc.is_object()) invalid(path, "expected a JSON object");
  if (!doc.contains("expectations_schema_version") || doc["expectations_schema_version"] != kExpectationsSchemaVersion)
    invalid(path, "expectations_schema_version must be " + std::to_string(kExpectationsSchemaVersion));
  Expectations e;
  e.path = path;
  e.document = doc;
  e.sku = string_field(doc, "sku", path, "");
  e.name = string_field(doc, "name", path, "", false);
  if (doc.contains("match")) {
    const json& m = doc["match"];
    if (!m.is_object()) invalid(path, "'match' must be an object {backend, device_regex}");
    e.match_backend = string_field(m, "backend", path, "match.", false);
    e.match_device_regex = string_field(m, "device_regex", path, "match.", false);
    // std::regex compiles and matches by recursion: a deeply nested or very long pattern
    // overflows the stack (a crash, not a message). A device name needs neither.
    int depth = 0, deepest = 0;
    for (const char ch : e.match_device_regex) deepest = std::max(deepest, depth += ch == '(' ? 1 : ch == ')' ? -1 : 0);
    if (e.match_device_regex.size() > kMaxDeviceRegexChars || deepest > kMaxDeviceRegexDepth)
      invalid(path, "match.device_regex: " + std::to_string(e.match_device_regex.size()) + " characters, " +
                        std::to_string(deepest) + " levels of parentheses: at most " +
                        std::to_string(kMaxDeviceRegexChars) + " and " + std::to_string(kMaxDeviceRegexDepth) +
                        " (a device name needs no more)");
    try {
      std::regex check(e.match_device_regex);
    } catch (const std::regex_error& x) {
      invalid(path, std::string("match.device_regex: not a regular expression (") + x.what() + ")");
    }
  }
  if (doc.contains("health")) e.health = health_expectation(doc["health"], path);
  if (!doc.contains("metrics") || !doc["metrics"].is_object()) invalid(path, "'metrics' must be an object");
  if (doc["metrics"].empty()) invalid(path, "'metrics' is empty: the file expects nothing, so a check against it would check nothing");
  for (const auto& [id, m] : doc["metrics"].items()) {
    try {
      fleet::check_metric_id("metrics", id);
    } catch (const std::invalid_argument& x) {
      invalid(path, x.what());
    }
    e.metrics.emplace(id, metric(id, m, path));
  }
  return e;
}

Expectations read_expectations(const std::string& path) {
  if (const std::string why = not_a_regular_file(path); !why.empty()) invalid(path, why);
  std::ifstream in(path);
  if (!in) invalid(path, "cannot be opened");
  json doc;
  std::stringstream text;
  text << in.rdbuf();
  try {
    doc = parse_json_unique_keys(text.str());  // a key given twice: which figure is meant?
  } catch (const json::exception& x) {
    invalid(path, "malformed JSON: " + calibration::json_parse_error_text(x));
  } catch (const DuplicateKeyError& x) {
    invalid(path, x.what());
  }
  return parse_expectations(doc, path);
}

std::string find_expectations_dir() {
  if (const char* env = std::getenv("GPUCAL_EXPECTATIONS_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::canonical("/proc/self/exe", ec);
  if (!ec) {
    // Beside the binary, the build tree's copy (<build>/app/gpucal, <build>/expectations), an install.
    for (const fs::path& p : {self.parent_path() / "expectations", self.parent_path().parent_path() / "expectations",
                              self.parent_path().parent_path() / "share" / "gpucal" / "expectations"})
      if (fs::is_directory(p)) return p.string();
  }
  return GPUCAL_SOURCE_EXPECTATIONS_DIR;
}

std::vector<Expectations> read_expectations_dir(const std::string& dir) {
  if (dir.empty() || !fs::is_directory(dir))
    throw std::invalid_argument("expectations folder '" + dir + "' not found (set GPUCAL_EXPECTATIONS_DIR)");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  std::vector<Expectations> all;
  for (const auto& f : files) all.push_back(read_expectations(f));
  return all;
}

bool matches(const Expectations& e, const std::string& device_name, const std::string& backend) {
  if (!e.match_backend.empty() && e.match_backend != backend) return false;
  if (e.match_device_regex.empty()) return !e.match_backend.empty();
  return std::regex_search(device_name, std::regex(e.match_device_regex, std::regex::icase));
}

std::optional<Expectations> match_sku(const std::vector<Expectations>& all, const std::string& device_name,
                                      const std::string& backend) {
  std::optional<Expectations> found;
  for (const auto& e : all) {
    if (!matches(e, device_name, backend)) continue;
    if (found)
      throw std::invalid_argument("device '" + device_name + "' (" + backend + ") matches both " + found->path +
                                  " and " + e.path);
    found = e;
  }
  return found;
}

std::vector<CheckLine> check_metrics(const fleet::MetricSet& measured, const Expectations& expected) {
  std::vector<CheckLine> lines;
  for (const auto& [id, e] : expected.metrics) {
    CheckLine line{id, "", e.unit, "", std::nullopt, e.floor.value, e.typical.value, e.floor.source, e.typical.source};
    const auto it = measured.find(id);
    if (it == measured.end()) {
      line.status = "not measured";
      line.detail = "no ok row gives " + id;
    } else {
      line.value = it->second.value;
      line.detail = it->second.point;
      if (!e.floor.value) line.status = "no floor";
      else line.status = meets(*line.value, *e.floor.value, e.better) ? "pass" : "fail";
      // Beyond the device's peak is no measurement of it (a timing that missed the work, a FLOP
      // count of another convention): it fails, never passes as fast.
      if (e.peak.value && e.better == fleet::Better::higher && beyond_recorded_peak(*line.value, *e.peak.value)) {
        line.status = "fail";
        line.above_peak = true;
        line.detail = it->second.point + ": above the peak " + fleet::format_value(*e.peak.value) + " " + e.unit +
                      " (" + e.peak.source + "), so not a physical figure: check the source's timing and FLOP count";
      }
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace gpucal::check
