#include "harness/driver.h"

#include <benchmark/benchmark.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>
#include <optional>
#include <regex>

#include "harness/csv_sink.h"
#include "harness/errors.h"
#include "harness/progress.h"

namespace gpucal {

namespace {

void fill_timing(Row& row, const Measurement& m) {
  const Summary& s = m.seconds;
  row.set("samples", s.count)
      .set("launches_per_sample", m.launches_per_sample)
      .set("converged", m.converged)
      .set("time_us_median", s.median * 1e6)
      .set("time_us_p10", s.p10 * 1e6)
      .set("time_us_p90", s.p90 * 1e6)
      .set("time_us_min", s.min * 1e6)
      .set("time_us_max", s.max * 1e6)
      .set("time_us_mean", s.mean * 1e6)
      .set("time_us_stdev", s.stdev * 1e6)
      .set("noise_rel", s.median_rel_se);
}

// Throughput cells that also become Google Benchmark counters when a row has them.
const char* const kCounterColumns[] = {"tflops", "efficiency", "algbw_gbps", "busbw_gbps", "bandwidth_gbps"};

void set_counters(benchmark::State& state, const Row& row, const Measurement& m) {
  for (const char* col : kCounterColumns) {
    const std::string v = row.get(col);
    if (!v.empty()) state.counters[col] = std::atof(v.c_str());
  }
  state.counters["samples"] = m.seconds.count;
  state.counters["p10_us"] = m.seconds.p10 * 1e6;
  state.counters["p90_us"] = m.seconds.p90 * 1e6;
  state.SetLabel("verified=" + row.get("verified") + (row.get("status") == "ok" ? "" : " status=" + row.get("status")));
}

// Google Benchmark filter semantics (a regex; a leading '-' negates) for the progress count.
bool matches_filter(const std::string& name, const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".") return true;
  bool negate = filter[0] == '-';
  std::regex re(negate ? filter.substr(1) : filter, std::regex::extended);
  return std::regex_search(name, re) != negate;
}

std::string arg_value(int argc, char** argv, const std::string& flag) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
  }
  return "";
}

}  // namespace

Row run_point(Op& op, PointContext& ctx, void* benchmark_state, RunTally& tally) {
  auto* state = static_cast<benchmark::State*>(benchmark_state);
  Row row;
  row.set("bench", ctx.bench)
      .set("impl", op.impl())
      .set("backend", ctx.backend.name())
      .set("device", ctx.backend.info().name)
      .set("point", op.point())
      .set("regime", ctx.config.regime);
  op.describe(row);
  std::optional<Measurement> measured;
  auto record_failure = [&](const std::string& status, const std::string& detail) {
    row.set("status", status).set("status_detail", detail);
    if (state) state->SkipWithError((status + ": " + detail).c_str());
  };
  try {
    op.setup(ctx.backend, ctx.config);
    Verification v = op.verify();
    row.set("verified", v.status).set("max_rel_err", v.max_rel_err);
    if (v.status == "fail") {
      record_failure("error", "verification failed: " + v.detail);
    } else {
      auto launch = [&op] { op.launch(); };
      if (state) {
        for (auto _ : *state) {
          measured = measure(ctx.backend, ctx.config.measure, launch);
          state->SetIterationTime(measured->seconds.median);
        }
      } else {
        measured = measure(ctx.backend, ctx.config.measure, launch);
      }
      fill_timing(row, *measured);
      const bool plausible = op.annotate(row, *measured);
      if (!plausible) {
        record_failure("error", "throughput above the theoretical peak: timing or counting is wrong");
      } else {
        row.set("status", "ok");
        if (v.status == "skipped" && !v.detail.empty()) row.set("status_detail", "not verified: " + v.detail);
        if (state) set_counters(*state, row, *measured);
      }
    }
  } catch (const SkipPoint& e) {
    record_failure("skipped", e.what());
  } catch (const std::exception& e) {
    record_failure("error", e.what());
  }
  try {
    op.teardown();
  } catch (const std::exception& e) {
    if (row.get("status") == "ok") record_failure("error", std::string("teardown: ") + e.what());
  }
  ++tally.rows;
  if (row.get("status") == "error") ++tally.failures;
  if (row.get("status") == "skipped") ++tally.skips;
  if (ctx.emit) ctx.emit(row, measured ? &*measured : nullptr);
  return row;
}

int bench_main(int argc, char** argv, const BenchSpec& spec) {
  const std::string prog = "bench_" + spec.bench;
  RunConfig config;
  config.bench = spec.bench;
  for (int i = 0; i < argc; ++i) config.command_line.push_back(argv[i]);
  CLI::App app(spec.description, prog);
  add_common_options(app, config);
  if (spec.add_options) spec.add_options(app);
  app.footer(
      "Google Benchmark flags also apply: --benchmark_filter=REGEX, --benchmark_list_tests, "
      "--benchmark_format=console|json, --benchmark_out=FILE, --benchmark_repetitions=N.");
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::cout << app.help();
      return 0;
    }
  const std::string filter = arg_value(argc, argv, "--benchmark_filter");
  const std::string list_tests = arg_value(argc, argv, "--benchmark_list_tests");
  const bool listing = !list_tests.empty() && list_tests != "false" && list_tests != "0";
  benchmark::Initialize(&argc, argv);
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      throw UsageError(e.what());
    }
    finalize_config(config);
    if (spec.before_run && spec.before_run(config)) return 0;
    std::unique_ptr<Backend> backend = make_backend(config.backend, config.device);
    std::vector<std::unique_ptr<Op>> ops = spec.make_ops(*backend, config);

    std::unique_ptr<CsvSink> csv;
    std::unique_ptr<SamplesSink> samples;
    Metadata meta(config, *backend);
    if (spec.add_metadata) spec.add_metadata(meta, *backend);
    const std::string json_path = config.out.empty() ? "" : sidecar_path(config.out, ".json");
    if (!config.out.empty() && !listing) {
      csv = std::make_unique<CsvSink>(config.out, spec.columns);
      samples = std::make_unique<SamplesSink>(sidecar_path(config.out, ".samples.csv"));
      meta.write(json_path);
    }

    int selected = 0;
    for (const auto& op : ops) selected += matches_filter(op->point(), filter) ? 1 : 0;
    Progress progress(selected, !config.quiet && !listing);
    RunTally tally;
    PointContext ctx{*backend, config, spec.bench, [&](const Row& row, const Measurement* m) {
                       if (csv) csv->write(row);
                       if (samples && m) samples->write(row.get("point"), m->sample_seconds);
                     }};
    for (auto& op : ops) {
      Op* raw = op.get();
      benchmark::RegisterBenchmark(raw->point().c_str(),
                                   [raw, &ctx, &tally, &progress](benchmark::State& state) {
                                     progress.start_point(raw->point());
                                     run_point(*raw, ctx, &state, tally);
                                     progress.finish_point();
                                   })
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    const int code = tally.failures > 0 ? 1 : 0;
    if (csv) {
      meta.finish(tally.rows, tally.failures, code);
      meta.write(json_path);
    }
    if (tally.failures > 0)
      std::cerr << prog << ": " << tally.failures << " of " << tally.rows << " points failed (see status_detail)\n";
    return code;
  } catch (const UsageError& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << prog << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gpucal
