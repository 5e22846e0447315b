// One point on every rank: setup, verification, timing and teardown, each phase's outcome
// agreed across ranks, then its row (core/driver/driver.h).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <optional>

#include "core/driver/driver.h"
#include "core/errors.h"
#include "core/measure/telemetry.h"
#include "core/output/file_io.h"
#include "core/world/team.h"

namespace gpucal {

namespace {

void fill_timing(Row& row, const Measurement& m) {
  const Summary& s = m.seconds;
  row.set("samples", s.count)
      .set("launches_per_sample", m.launches_per_sample)
      .set("converged", m.converged)
      .set("stop_reason", to_string(m.stop_reason))
      .set("sampling_time_s", m.sampling_seconds)
      .set("time_us_median", s.median * 1e6)
      .set("time_us_p10", s.p10 * 1e6)
      .set("time_us_p90", s.p90 * 1e6)
      .set("time_us_min", s.min * 1e6)
      .set("time_us_max", s.max * 1e6)
      .set("time_us_mean", s.mean * 1e6)
      .set("time_us_stdev", s.stdev * 1e6)
      .set("noise_rel", s.median_rel_se)
      .set("suspect", m.suspect);
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
  state.SetLabel("verified=" + row.get("verified") +
                 (row.get("status") == "ok" ? "" : " status=" + row.get("status")));
}

// One phase's outcome on this rank: status "" (ok), "skipped" or "error".
struct Outcome {
  std::string status, detail;
};

// The same outcome on every rank: an error anywhere beats a skip anywhere; rank 0 gets the
// first failing rank's detail (prefixed with its rank when there are several).
Outcome agree_outcome(World* world, const Outcome& local) {
  if (!world || world->size() == 1) return local;
  const int64_t errors = world->sum_across(local.status == "error" ? 1 : 0);
  const int64_t skips = world->sum_across(local.status == "skipped" ? 1 : 0);
  if (errors == 0 && skips == 0) return {};
  Outcome out{errors > 0 ? "error" : "skipped", local.detail};
  const std::string mine =
      local.status.empty() ? "" : "rank " + std::to_string(world->rank()) + ": " + local.detail;
  for (const auto& d : world->gather_strings(mine))
    if (!d.empty()) {
      out.detail = d;
      break;
    }
  return out;
}

template <typename F>
Outcome run_phase(F&& f) {
  try {
    f();
    return {};
  } catch (const SkipPoint& e) {
    return {"skipped", e.what()};
  } catch (const std::exception& e) {
    return {"error", e.what()};
  }
}

bool several_ranks(const PointContext& ctx) {
  return ctx.world && ctx.world->size() > 1;
}

// The watchdog names the point and the phase it is in.
void arm(const PointContext& ctx, const Op& op, const char* phase) {
  if (ctx.watchdog) ctx.watchdog->arm(op.point() + " (" + phase + ")");
}

void record_failure(Row& row, benchmark::State* state, const std::string& status, const std::string& detail) {
  row.set("status", status).set("status_detail", detail);
  if (state) state->SkipWithError((status + ": " + detail).c_str());
}

// The row's identity cells, then the op's description of its point.
Row point_row(Op& op, const PointContext& ctx) {
  Row row;
  row.set("bench", ctx.bench)
      .set("impl", op.impl())
      .set("backend", ctx.backend.name())
      .set("device", ctx.backend.info().name)
      .set("point", op.point())
      .set("repetition", ctx.repetition)
      .set("regime", ctx.config.regime);
  if (several_ranks(ctx)) row.set("combine", ctx.config.combine);
  op.describe(row);
  return row;
}

// Setup, then (when it succeeded everywhere) verification and its cells; the agreed outcome.
Outcome set_up_and_verify(Op& op, PointContext& ctx, Row& row, Verification& v) {
  World* world = ctx.world;
  arm(ctx, op, "setup");
  const Outcome outcome = agree_outcome(world, run_phase([&] { op.setup(ctx.backend, ctx.config); }));
  if (!outcome.status.empty()) return outcome;
  arm(ctx, op, "verify");
  Outcome checked = run_phase([&] { v = op.verify(); });
  if (checked.status.empty() && v.status == "fail") checked = {"error", "verification failed: " + v.detail};
  const Outcome verified = agree_outcome(world, checked);
  const bool failed_anywhere =
      several_ranks(ctx) ? world->sum_across(v.status == "fail" ? 1 : 0) > 0 : v.status == "fail";
  row.set("verified", failed_anywhere ? "fail" : v.status).set("max_rel_err", v.max_rel_err);
  if (const auto* cells = dynamic_cast<const VerificationCells*>(&op)) cells->verification_cells(row);
  return verified;
}

// The point's samples, combined across ranks; under Google Benchmark, its one iteration
// reports the median as manual time.
void take_samples(Op& op, PointContext& ctx, benchmark::State* state, std::optional<Measurement>& measured) {
  auto launch = [&] {
    if (ctx.before_launch) ctx.before_launch();
    op.launch();
    if (ctx.watchdog) ctx.watchdog->beat();
  };
  std::optional<WorldTeam> team;
  if (several_ranks(ctx)) team.emplace(*ctx.world, parse_combine(ctx.config.combine), op.takes_part());
  Team* members = team ? &*team : nullptr;
  if (state) {
    for (auto _ : *state) {
      measured = measure(ctx.backend, ctx.config.measure, launch, members);
      state->SetIterationTime(measured->seconds.median);
    }
  } else {
    measured = measure(ctx.backend, ctx.config.measure, launch, members);
  }
}

// Telemetry read while the device is still in its loaded state; a throttled point is kept
// but says so, since its clocks were below what the load asked for. Returns that note.
std::string add_point_telemetry(PointContext& ctx, Row& row) {
  if (!ctx.telemetry) return "";
  const TelemetryReading reading = ctx.telemetry->read();
  add_telemetry(row, reading);
  return reading.throttle_reasons.empty() ? "" : "clocks throttled: " + reading.throttle_reasons;
}

// What qualifies an ok row's figure: not verified, the time cap extended, clocks throttled.
std::string ok_detail(const Verification& v, const Measurement& m, const RunConfig& config,
                      const std::string& throttled) {
  std::string detail = v.status == "skipped" && !v.detail.empty() ? "not verified: " + v.detail : "";
  if (m.stop_reason == StopReason::min_samples)
    detail += (detail.empty() ? "" : "; ") + std::string("time cap extended to ") +
              format_number(m.sampling_seconds) + " s to take --min-samples " +
              std::to_string(config.measure.min_samples);
  if (!throttled.empty()) detail += (detail.empty() ? "" : "; ") + throttled;
  return detail;
}

// Timing, its cells and the row's status. An error with several ranks ends every rank: the
// others may be waiting inside a collective of this loop.
void time_point(Op& op, PointContext& ctx, benchmark::State* state, const Verification& v, Row& row,
                std::optional<Measurement>& measured) {
  arm(ctx, op, "timing");
  try {
    take_samples(op, ctx, state, measured);
    fill_timing(row, *measured);
    const std::string throttled = add_point_telemetry(ctx, row);
    if (!op.annotate(row, *measured)) {
      record_failure(row, state, "error",
                     "throughput above the theoretical peak: timing or counting is wrong");
      return;
    }
    row.set("status", "ok");
    const std::string detail = ok_detail(v, *measured, ctx.config, throttled);
    if (!detail.empty()) row.set("status_detail", detail);
    if (state) set_counters(*state, row, *measured);
  } catch (const std::exception& e) {
    record_failure(row, state, "error", e.what());
    if (several_ranks(ctx)) {
      World* world = ctx.world;
      write_stderr_line("rank " + std::to_string(world->rank()) + ": " + op.point() + ": " + e.what() +
                        "; aborting all ranks");
      if (ctx.emit && world->is_root()) ctx.emit(row, nullptr);
      world->abort(1);
    }
  }
}

// Teardown (a failure there turns an ok row into an error), the tally, and the row to the
// sinks on rank 0.
void finish_point(Op& op, PointContext& ctx, benchmark::State* state, Row& row, const Measurement* measured,
                  RunTally& tally) {
  World* world = ctx.world;
  arm(ctx, op, "teardown");
  const Outcome released = agree_outcome(world, run_phase([&] { op.teardown(); }));
  if (!released.status.empty() && row.get("status") == "ok")
    record_failure(row, state, "error", "teardown: " + released.detail);
  ++tally.rows;
  if (row.get("status") == "error") ++tally.failures;
  if (row.get("status") == "skipped") ++tally.skips;
  // The watchdog stays armed past the point: a row write that hangs (a stuck filesystem)
  // is a stall like any other, and so is the hand-over to the next point.
  arm(ctx, op, "writing its row");
  if (ctx.emit && (!world || world->is_root())) ctx.emit(row, measured);
  arm(ctx, op, "handing over to the next point");
}

}  // namespace

Row run_point(Op& op, PointContext& ctx, void* benchmark_state, RunTally& tally) {
  auto* state = static_cast<benchmark::State*>(benchmark_state);
  Row row = point_row(op, ctx);
  Verification v;
  std::optional<Measurement> measured;
  const Outcome outcome = set_up_and_verify(op, ctx, row, v);
  if (!outcome.status.empty())
    record_failure(row, state, outcome.status, outcome.detail);
  else
    time_point(op, ctx, state, v, row, measured);
  finish_point(op, ctx, state, row, measured ? &*measured : nullptr, tally);
  return row;
}

}  // namespace gpucal
