#include "harness/run_config.h"

#include <CLI/CLI.hpp>

#include "harness/errors.h"

namespace gpucal {

void add_common_options(CLI::App& app, RunConfig& c) {
  app.add_option("--backend", c.backend, "auto | cuda | hip | host (auto: a GPU if present, else host)")
      ->capture_default_str();
  app.add_option("--device", c.device, "device ordinal for single-device benches")->capture_default_str();
  app.add_option("--out", c.out, "calibration CSV to write (FILE.json and FILE.samples.csv go beside it)");
  app.add_flag("--quiet", c.quiet, "no progress line on stderr");
  app.add_option("--regime", c.regime, "cold (cache flushed before each sample) or hot (back-to-back)")
      ->capture_default_str();
  app.add_option("--max-time-per-point", c.measure.max_time_s, "seconds of sampling per point at most")
      ->capture_default_str();
  app.add_option("--min-samples", c.measure.min_samples, "samples before the noise target may stop a point")
      ->capture_default_str();
  app.add_option("--noise-target", c.measure.noise_target,
                 "stop when the relative standard error of the median is below this")
      ->capture_default_str();
  app.add_option("--warmup-time", c.measure.warmup_time_s, "seconds of untimed launches before sampling")
      ->capture_default_str();
  app.add_option("--seed", c.seed, "base seed of the random inputs")->capture_default_str();
  app.add_option("--inject-fault", c.inject_fault, "test only: corrupt-output")->group("");
}

void finalize_config(RunConfig& c) {
  if (c.regime != "cold" && c.regime != "hot") throw UsageError("--regime: expected cold or hot, got '" + c.regime + "'");
  c.measure.cold = c.regime == "cold";
  if (c.measure.max_time_s <= 0) throw UsageError("--max-time-per-point must be positive");
  if (c.measure.min_samples < 1) throw UsageError("--min-samples must be at least 1");
  if (c.measure.noise_target < 0) throw UsageError("--noise-target must be non-negative");
  if (c.measure.warmup_time_s < 0) throw UsageError("--warmup-time must be non-negative");
  if (!c.inject_fault.empty() && c.inject_fault != "corrupt-output")
    throw UsageError("--inject-fault: expected corrupt-output");
  if (c.device < 0) throw UsageError("--device must be non-negative");
}

}  // namespace gpucal
