#include "app/export/export_workload_flags.h"

#include <CLI/CLI.hpp>
#include <filesystem>

#include "app/common/calibration_json.h"
#include "app/export/export_registry.h"
#include "core/errors.h"

namespace gpucal::calibration {

void ExportWorkloadFlags::add(CLI::App& cmd) {
  model_.add(cmd, "workload targets: ");
  policy_.add(cmd, options_);
  allow_missing_ = cmd.add_flag("--allow-missing", options_.allow_missing,
                                "workload targets: leave out (and list in NOTES.md) operations nothing measures or "
                                "models, as predict does; the traces then lack them");
}

void ExportWorkloadFlags::check(const std::string& target) const {
  if (!model_.active()) {
    if (target != "all" && export_target_takes_model(target))
      throw UsageError("--to " + target + " writes a workload: it needs --model NAME or --model-config FILE");
    model_.require_model_for_layout_flags();
    for (const CLI::Option* o : policy_.options_given)
      if (o->count() > 0) throw UsageError(o->get_name() + " needs --model NAME or --model-config FILE");
    if (allow_missing_ && allow_missing_->count() > 0)
      throw UsageError("--allow-missing leaves a workload's operations out: it needs --model NAME or --model-config FILE");
    return;
  }
  policy_.check(options_);
}

namespace {
// The backend of a calibration's rows (its sources' backends, in bench order), host when none says.
std::string calibration_backend(const nlohmann::json& calibration) {
  if (calibration.contains("sources") && calibration["sources"].is_object())
    for (const auto& [name, source] : calibration["sources"].items())
      if (source.contains("backends") && source["backends"].is_array() && !source["backends"].empty())
        return source["backends"][0].get<std::string>();
  return "host";
}
}  // namespace

std::shared_ptr<const ExportWorkload> ExportWorkloadFlags::resolve(const std::string& source,
                                                                   const ResultsDir* results,
                                                                   const nlohmann::json& calibration) const {
  if (!model_.active()) return nullptr;
  auto w = std::make_shared<ExportWorkload>();
  w->options = options_;
  policy_.resolve(w->options);
  w->spec = model_.spec();
  w->layout = model_.resolved_layout(results ? predict::results_backend(*results) : calibration_backend(calibration));
  if (results) w->results = *results;
  const std::string beside = (std::filesystem::path(source) / "calibration.json").string();
  w->calibration = results && std::filesystem::exists(beside) ? read_calibration_file(beside) : calibration;
  // The layout and schedule checked now, as usage errors, rather than inside a writer.
  predict::validate_schedule(w->options.schedule, model::derive_workload(w->spec, w->layout));
  return w;
}

}  // namespace gpucal::calibration
