#include "core/driver/run_config.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <sstream>

#include "core/errors.h"
#include "core/driver/flag_checks.h"

namespace gpucal {

namespace {
std::string format_seconds(double s) {
  std::ostringstream o;
  o << s;
  return o.str();
}
}  // namespace

void add_common_options(CLI::App& app, RunConfig& c) {
  app.add_option("--backend", c.backend, "auto | cuda | hip | host (auto: a GPU if present, else host)")
      ->capture_default_str();
  add_number(app, "--device", c.device, "device ordinal for single-device benches", {.min = 0, .max = 1023})
      ->capture_default_str();
  app.add_option("--out", c.out, "calibration CSV to write (FILE.json and FILE.samples.csv go beside it)")
      ->check([](const std::string& path) { return path.empty() ? std::string("expected a file name, got ''") : std::string(); });
  app.add_flag("--quiet", c.quiet, "no progress line on stderr");
  app.add_option("--regime", c.regime, "cold (cache flushed before each sample) or hot (back-to-back)")
      ->capture_default_str();
  add_number(app, "--max-time-per-point", c.measure.max_time_s,
             "seconds of sampling per point at most (counted after warm-up; extended to reach --min-samples)",
             {.min = 0, .max = 86400, .min_exclusive = true})
      ->capture_default_str()
      ->each([&c](const std::string&) { c.max_time_given = true; });
  add_number(app, "--min-time-per-point", c.measure.min_time_s,
             "seconds of sampling per point at least (--benchmark_min_time sets it too)", {.min = 0, .max = 86400})
      ->capture_default_str()
      ->each([&c](const std::string&) { c.min_time_given = true; });
  add_number(app, "--min-samples", c.measure.min_samples,
             "samples every point takes, even past --max-time-per-point; the noise target stops it only after them",
             {.min = 1, .max = static_cast<double>(c.measure.max_samples)})
      ->capture_default_str();
  add_number(app, "--noise-target", c.measure.noise_target,
             "stop when the relative standard error of the median is below this", {.min = 0, .max = 1})
      ->capture_default_str();
  add_number(app, "--warmup-time", c.measure.warmup_time_s, "seconds of untimed launches before sampling",
             {.min = 0, .max = 3600})
      ->capture_default_str();
  add_number(app, "--seed", c.seed, "base seed of the random inputs", {.min = 0})->capture_default_str();
  app.add_option("--inject-fault", c.inject_fault, "test only: corrupt-output")->group("");
}

void finalize_config(RunConfig& c) {
  if (c.backend != "auto" && c.backend != "cuda" && c.backend != "hip" && c.backend != "host")
    throw UsageError("--backend: unknown backend '" + c.backend + "' (expected auto, cuda, hip or host)");
  if (c.regime != "cold" && c.regime != "hot") throw UsageError("--regime: expected cold or hot, got '" + c.regime + "'");
  c.measure.cold = c.regime == "cold";
  // Both flags given, the floor above the cap, is a contradiction. A floor above the default
  // cap, or Google Benchmark's --benchmark_min_time (its "at least"), raises the cap: sampling
  // lasts at least the floor.
  if (c.max_time_given && c.min_time_given && c.measure.min_time_s > c.measure.max_time_s)
    throw UsageError("--min-time-per-point " + format_seconds(c.measure.min_time_s) +
                     " is above --max-time-per-point " + format_seconds(c.measure.max_time_s) +
                     ": lower the one or raise the other");
  c.measure.max_time_s = std::max(c.measure.max_time_s, c.measure.min_time_s);
  if (!c.inject_fault.empty() && c.inject_fault != "corrupt-output")
    throw UsageError("--inject-fault: expected corrupt-output");
}

}  // namespace gpucal
