// `gpucal export --set KEY=VALUE`: figures a modeler supplies by hand where gpucal has not
// measured them (or wants to override a measurement), and the modelled machine's shape.
// Every key is listed in export_setting_specs() with its unit and the fields it fills; an
// unknown key or a malformed value is a usage error. Exporters say in their notes which
// values came from --set.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpucal::calibration {

struct ExportWorkload;  // app/export/export_workload.h

enum class SettingKind {
  kPositive,  // a finite number from 1e-6 to 1e9 (no machine's figure lies outside)
  kFraction,  // 0 <= v < 1
  kCount,     // an integer >= 1
  kBytes,     // a size in bytes, 1 to 2^52, with binary suffixes K M G T (as every size axis)
  kWord,      // one of ExportSettingSpec::words
  kText,      // a name: letters, digits, '.', '_', '-' (not '.' or '..': it may name a folder)
};

struct ExportSettingSpec {
  std::string key;
  SettingKind kind = SettingKind::kPositive;
  std::string unit;                // "GB/s", "GiB", "TFLOP/s", "µs", "GPUs", ...
  std::string fills;               // which consumers' fields (docs/calibration.md, error messages)
  std::vector<std::string> words;  // the allowed values of a kWord key
};

const std::vector<ExportSettingSpec>& export_setting_specs();

class ExportSettings {
 public:
  ExportSettings() = default;
  // Parses "key=value" items; throws std::invalid_argument naming the item on an unknown key,
  // a value of the wrong kind, or a key given twice.
  static ExportSettings parse(const std::vector<std::string>& items);

  std::optional<double> number(const std::string& key) const;
  std::optional<std::string> word(const std::string& key) const;
  bool has(const std::string& key) const { return values_.count(key) > 0; }

  // The step the workload targets write (gpucal export --model ...); null without --model.
  const ExportWorkload* workload() const { return workload_.get(); }
  void set_workload(std::shared_ptr<const ExportWorkload> workload) { workload_ = std::move(workload); }

 private:
  std::map<std::string, std::string> values_;
  std::shared_ptr<const ExportWorkload> workload_;
};

// The one-line refusal for a required figure that is neither measured nor set:
// "<field>: <why>; measure it with <run>, or pass --set <key>=<example>" (no --set part when
// key is empty: a figure only a measurement gives; no run part when run is empty: a figure no
// gpucal bench measures).
std::string missing_figure(const std::string& field, const std::string& why, const std::string& run,
                           const std::string& key, const std::string& example);

}  // namespace gpucal::calibration
