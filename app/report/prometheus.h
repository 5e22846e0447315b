// node_exporter's textfile-collector format (the Prometheus text exposition format, gauges only)
// for the operator's verdicts: `--prometheus FILE` of `gpucal fleet report`, `gpucal check` and
// `gpucal history regressions`. Families keep the order of their first sample; each is printed
// once with its # HELP and # TYPE lines. The file is replaced whole (write_file_atomic: a
// temporary beside it, then a rename), so the collector never reads half of one.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpucal::fleet {

using PromLabels = std::vector<std::pair<std::string, std::string>>;  // name, value; empty values left out

// "gpucal_" + `metric`, every character outside [a-zA-Z0-9_:] replaced by '_'.
std::string prom_name(const std::string& metric);
// A label value with backslash, double quote and newline escaped.
std::string prom_escape(const std::string& value);

class PromText {
 public:
  // One sample of the gauge family gpucal_<metric>; `help` is used when the family is new.
  void gauge(const std::string& metric, const std::string& help, const PromLabels& labels, double value);
  std::string text() const;

 private:
  struct Family {
    std::string name, help;
    std::vector<std::string> samples;
  };
  std::vector<Family> families_;
};

// Seconds since the epoch of an ISO 8601 UTC time ("2026-11-26T05:09:43Z"); nullopt when unreadable.
std::optional<double> unix_seconds(const std::string& iso);
double now_seconds();

// Writes `text` atomically; a path that cannot be written throws (exit 2 for OpenError, like
// the other outputs) with "--prometheus: " before the reason.
void write_prometheus(const std::string& path, const PromText& text);

// Splits a history or report subject "a--b" into node and peer labels; a node alone has no peer.
PromLabels subject_labels(const std::string& subject);

}  // namespace gpucal::fleet
