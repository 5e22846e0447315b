// The model and layout flags, one parser for every command that takes a model: the benches
// (through ModelOptions) and `gpucal predict`. add() puts --model, --model-config and the
// layout flags (--tp --pp --dp --cp --ep --sp --micro-batch --global-batch --grad-dtype --zero
// --dp-bucket-params --pp-stage --layers --scale, and --seq/--dtype unless the app has them)
// on a CLI11 app; derive() turns what was given into the step's Workload.
#pragma once

#include <string>
#include <vector>

#include "core/model/workload.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gpucal::model {

struct ModelFlags {
  std::string model, model_config, grad_dtype = "auto", dp_bucket = "auto", pp_stage = "last", dtype = "auto";
  std::string seq;
  bool sp = false;
  ParallelLayout layout;
  CLI::Option *model_opt = nullptr, *config_opt = nullptr;
  // --seq and --dtype: the app's own when it has them (a bench's axis), shared.
  CLI::Option *seq_opt = nullptr, *dtype_opt = nullptr;
  std::vector<CLI::Option*> layout_opts;  // the flags that mean nothing without --model

  // Adds the flags to `app`. `what` prefixes the help texts ("--model: " on the benches).
  void add(CLI::App& app, const std::string& what);
  bool active() const { return !model.empty() || !model_config.empty(); }
  // UsageError naming the first layout flag given without --model / --model-config.
  void require_model_for_layout_flags() const;
  // The layout as given (seq, dtype resolved: `auto` as resolve_model_dtype for
  // `backend_name`), validated (UsageError, one line).
  ParallelLayout resolved_layout(const std::string& backend_name) const;
  ModelSpec spec() const;  // the preset or the JSON model
  Workload derive(const std::string& backend_name) const { return derive_workload(spec(), resolved_layout(backend_name)); }
};

}  // namespace gpucal::model
