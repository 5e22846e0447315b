// What a SKU should measure: expectations/<sku>.json, one file per SKU, per metric (the ids of
// app/report/node_metrics.h) a floor and a typical value, each with its published source or
// "no published figure". `floor` is the worst acceptable value: a minimum for higher-is-better
// metrics, a maximum for latencies. Format: expectations/README.md.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/report/node_metrics.h"

namespace gpucal::check {

constexpr int kExpectationsSchemaVersion = 1;

struct Figure {
  std::optional<double> value;  // nullopt: "no published figure"
  std::string source;
};

struct MetricExpectation {
  std::string id, unit, what;
  fleet::Better better = fleet::Better::higher;
  Figure typical, floor, peak;
};

// What a healthy GPU of the SKU shows that the device itself may not say (a GPU reports the
// PCIe generation its platform allows as its maximum): each with its published source.
struct HealthExpectation {
  std::optional<int> pcie_generation, pcie_width, nvlink_links;
  std::string pcie_source, nvlink_source;
};

struct Expectations {
  std::string path;
  std::string sku, name;
  std::string match_backend;      // "" = any
  std::string match_device_regex;  // ECMAScript, searched in the device name
  std::map<std::string, MetricExpectation> metrics;
  HealthExpectation health;  // the optional "health" object
  nlohmann::json document;  // as read
};

// Throws std::invalid_argument naming the file and the field when the file is not a valid
// expectations file.
Expectations read_expectations(const std::string& path);
Expectations parse_expectations(const nlohmann::json& document, const std::string& path);

// The shipped expectations folder: $GPUCAL_EXPECTATIONS_DIR, else ./expectations or
// ../expectations beside the binary (the build tree's copy), ../share/gpucal/expectations, else
// the source tree's.
std::string find_expectations_dir();

// Every *.json of `dir`, read (throws on the first invalid one).
std::vector<Expectations> read_expectations_dir(const std::string& dir);

// The one expectations whose match fits; nullopt when none does; throws when several do (the
// shipped files must not overlap).
std::optional<Expectations> match_sku(const std::vector<Expectations>& all, const std::string& device_name,
                                      const std::string& backend);

bool matches(const Expectations& e, const std::string& device_name, const std::string& backend);

// One metric checked: status pass | fail | no floor | not measured.
struct CheckLine {
  std::string metric, status, unit, detail;
  std::optional<double> value, floor, typical;
  std::string floor_source, typical_source;
  bool above_peak = false;  // a higher-is-better value beyond the expectations' peak: failed, not physical
};

std::vector<CheckLine> check_metrics(const fleet::MetricSet& measured, const Expectations& expected);

// Whether `value` is at least as good as `limit` for the direction.
bool meets(double value, double limit, fleet::Better better);

}  // namespace gpucal::check
