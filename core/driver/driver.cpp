#include "core/driver/driver.h"

#include <benchmark/benchmark.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "core/output/csv_sink.h"
#include "core/errors.h"
#include "core/output/file_io.h"
#include "core/driver/flag_checks.h"
#include "core/driver/gbench_flags.h"
#include "core/measure/malloc_policy.h"
#include "core/measure/progress.h"
#include "core/world/team.h"
#include "core/measure/telemetry.h"
#include "core/world/thread_world.h"

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
  state.SetLabel("verified=" + row.get("verified") + (row.get("status") == "ok" ? "" : " status=" + row.get("status")));
}

// Google Benchmark filter semantics (a regex; a leading '-' negates) for the progress count.
bool matches_filter(const std::string& name, const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".") return true;
  bool negate = filter[0] == '-';
  std::regex re(negate ? filter.substr(1) : filter, std::regex::extended);
  return std::regex_search(name, re) != negate;
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
  const std::string mine = local.status.empty() ? "" : "rank " + std::to_string(world->rank()) + ": " + local.detail;
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

}  // namespace

Row run_point(Op& op, PointContext& ctx, void* benchmark_state, RunTally& tally) {
  auto* state = static_cast<benchmark::State*>(benchmark_state);
  World* world = ctx.world;
  const bool multi = world && world->size() > 1;
  auto arm = [&](const char* phase) {
    if (ctx.watchdog) ctx.watchdog->arm(op.point() + " (" + phase + ")");
  };
  Row row;
  row.set("bench", ctx.bench)
      .set("impl", op.impl())
      .set("backend", ctx.backend.name())
      .set("device", ctx.backend.info().name)
      .set("point", op.point())
      .set("repetition", ctx.repetition)
      .set("regime", ctx.config.regime);
  if (multi) row.set("combine", ctx.config.combine);
  op.describe(row);
  std::optional<Measurement> measured;
  auto record_failure = [&](const std::string& status, const std::string& detail) {
    row.set("status", status).set("status_detail", detail);
    if (state) state->SkipWithError((status + ": " + detail).c_str());
  };
  Verification v;
  arm("setup");
  Outcome outcome = agree_outcome(world, run_phase([&] { op.setup(ctx.backend, ctx.config); }));
  if (outcome.status.empty()) {
    arm("verify");
    Outcome checked = run_phase([&] { v = op.verify(); });
    if (checked.status.empty() && v.status == "fail") checked = {"error", "verification failed: " + v.detail};
    outcome = agree_outcome(world, checked);
    const bool failed_anywhere = multi ? world->sum_across(v.status == "fail" ? 1 : 0) > 0 : v.status == "fail";
    row.set("verified", failed_anywhere ? "fail" : v.status).set("max_rel_err", v.max_rel_err);
    if (const auto* cells = dynamic_cast<const VerificationCells*>(&op)) cells->verification_cells(row);
  }
  if (!outcome.status.empty()) {
    record_failure(outcome.status, outcome.detail);
  } else {
    arm("timing");
    auto launch = [&] {
      if (ctx.before_launch) ctx.before_launch();
      op.launch();
      if (ctx.watchdog) ctx.watchdog->beat();
    };
    try {
      std::optional<WorldTeam> team;
      if (multi) team.emplace(*world, parse_combine(ctx.config.combine), op.takes_part());
      Team* members = team ? &*team : nullptr;
      if (state) {
        for (auto _ : *state) {
          measured = measure(ctx.backend, ctx.config.measure, launch, members);
          state->SetIterationTime(measured->seconds.median);
        }
      } else {
        measured = measure(ctx.backend, ctx.config.measure, launch, members);
      }
      fill_timing(row, *measured);
      std::string throttled;
      if (ctx.telemetry) {
        // Read while the device is still in its loaded state; a throttled point is kept
        // but says so, since its clocks were below what the load asked for.
        const TelemetryReading reading = ctx.telemetry->read();
        add_telemetry(row, reading);
        if (!reading.throttle_reasons.empty()) throttled = "clocks throttled: " + reading.throttle_reasons;
      }
      const bool plausible = op.annotate(row, *measured);
      if (!plausible) {
        record_failure("error", "throughput above the theoretical peak: timing or counting is wrong");
      } else {
        row.set("status", "ok");
        std::string detail = v.status == "skipped" && !v.detail.empty() ? "not verified: " + v.detail : "";
        if (measured->stop_reason == StopReason::min_samples)
          detail += (detail.empty() ? "" : "; ") + std::string("time cap extended to ") +
                    format_number(measured->sampling_seconds) + " s to take --min-samples " +
                    std::to_string(ctx.config.measure.min_samples);
        if (!throttled.empty()) detail += (detail.empty() ? "" : "; ") + throttled;
        if (!detail.empty()) row.set("status_detail", detail);
        if (state) set_counters(*state, row, *measured);
      }
    } catch (const std::exception& e) {
      record_failure("error", e.what());
      if (multi) {
        // The other ranks may be waiting inside a collective of this loop: write what we
        // have and end every rank rather than leave them hanging.
        write_stderr_line("rank " + std::to_string(world->rank()) + ": " + op.point() + ": " + e.what() +
                          "; aborting all ranks");
        if (ctx.emit && world->is_root()) ctx.emit(row, nullptr);
        world->abort(1);
      }
    }
  }
  arm("teardown");
  Outcome released = agree_outcome(world, run_phase([&] { op.teardown(); }));
  if (!released.status.empty() && row.get("status") == "ok") record_failure("error", "teardown: " + released.detail);
  ++tally.rows;
  if (row.get("status") == "error") ++tally.failures;
  if (row.get("status") == "skipped") ++tally.skips;
  // The watchdog stays armed past the point: a row write that hangs (a stuck filesystem)
  // is a stall like any other, and so is the hand-over to the next point.
  arm("writing its row");
  if (ctx.emit && (!world || world->is_root())) ctx.emit(row, measured ? &*measured : nullptr);
  arm("handing over to the next point");
  return row;
}

namespace {

// After a setup step that each rank ran on its own: when it failed anywhere, rank 0 prints
// the first failing rank's message and every rank gets the same exit code, so no rank goes
// on alone into a collective.
int agreed_exit_code(World& world, int local_code, const std::string& local_msg, const std::string& prog) {
  const int code = world.size() == 1 ? local_code : static_cast<int>(world.max_across(local_code));
  if (code == 0) return 0;
  for (const auto& m : world.gather_strings(local_code ? local_msg : ""))
    if (!m.empty()) {
      write_stderr_line(prog + ": error: " + m);
      break;
    }
  return code;
}

// --inject-rank-fault (test only): KIND-rank=R[@P]: rank R hangs (sleeps) or kills itself
// (SIGKILL) at its first launch of the P-th point run (0-based, default 1); hang-sink[@P]:
// rank 0 hangs while writing the P-th point's row (a stuck filesystem).
struct RankFault {
  std::string kind;  // "" | hang | kill | hang-sink
  int rank = -1, point = 1;
};

RankFault parse_rank_fault(const std::string& text) {
  RankFault f;
  if (text.empty()) return f;
  const std::regex re("(hang|kill)-rank=([0-9]{1,6})(@([0-9]{1,6}))?|hang-sink(@([0-9]{1,6}))?");
  std::smatch m;
  if (!std::regex_match(text, m, re))
    throw UsageError("--inject-rank-fault: expected hang-rank=R[@P], kill-rank=R[@P] or hang-sink[@P], got '" + text +
                     "'");
  if (m[1].matched) {
    f.kind = m[1];
    f.rank = std::stoi(m[2]);
    if (m[4].matched) f.point = std::stoi(m[4]);
  } else {
    f.kind = "hang-sink";
    f.rank = 0;
    if (m[6].matched) f.point = std::stoi(m[6]);
  }
  return f;
}

[[noreturn]] void hang_forever(const std::string& prog, int rank, const std::string& what) {
  write_stderr_line(prog + ": rank " + std::to_string(rank) + ": injected fault: " + what);
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Google Benchmark's --benchmark_out must not be a file --out writes (the sidecar would
// overwrite its JSON, or it the sidecar).
void refuse_output_clash(const std::string& gbench_out, const std::string& out) {
  if (gbench_out.empty() || out.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path theirs = fs::weakly_canonical(gbench_out, ec);
  for (const char* suffix : {"", ".json", ".samples.csv"}) {
    const std::string ours = *suffix ? sidecar_path(out, suffix) : out;
    if (fs::weakly_canonical(ours, ec) == theirs)
      throw UsageError("--benchmark_out=" + gbench_out + " is " +
                       (*suffix ? "the " + std::string(suffix) + " file written beside --out " + out
                                : std::string("the --out CSV itself")) +
                       ": give Google Benchmark's output another name");
  }
}

// The GPU runtime --backend resolves to ("" for the host; auto: a runtime with any device).
std::string gpu_runtime_of(const RunConfig& config) {
  const std::string name = resolve_backend_name(config.backend);
  return name == "host" ? "" : name;
}

// Under MPI or --threads with a GPU backend, each rank drives the GPU of its local rank
// (offset by --device); more ranks on a node than GPUs is an input error.
void assign_device(World& world, RunConfig& config) {
  const bool threads = world.kind() == "threads";
  if ((world.size() == 1 && !threads) || config.backend == "host") return;
  const std::string gpu = gpu_runtime_of(config);
  if (gpu.empty()) return;
  const int count = gpu_device_count(gpu);
  const int device = config.device + world.local_rank();
  if (device >= count) {
    const std::string from = config.device ? " from --device " + std::to_string(config.device) : "";
    if (threads)
      throw UsageError("--threads " + std::to_string(world.size()) + " but backend '" + gpu + "' has " +
                       std::to_string(count) + " usable device(s)" + from);
    throw UsageError(std::to_string(world.local_size()) + " ranks on node " + world.hostname() + " but only " +
                     std::to_string(count) + " usable " + gpu + " device(s)" + from);
  }
  config.device = device;
}

// --threads: "" (off: one rank per process), "all" (one thread per visible GPU from
// --device on) or a count; 0 means off.
int resolve_threads(const std::string& text, const RunConfig& config, World& world) {
  if (text.empty()) return 0;
  if (world.size() > 1)
    throw UsageError("--threads runs every rank as a thread of one process; under mpirun/srun start one rank per "
                     "GPU instead (not both)");
  if (text == "all") {
    const std::string gpu = gpu_runtime_of(config);
    if (gpu.empty()) throw UsageError("--threads all counts GPUs, and this run has none (host backend): give a count");
    const int n = gpu_device_count(gpu) - config.device;
    if (n < 1)
      throw UsageError("--threads all: backend '" + gpu + "' has 0 usable device(s) from --device " +
                       std::to_string(config.device));
    return n;
  }
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || n < 1 || n > 1024)
    throw UsageError("--threads: expected a count from 1 to 1024 or 'all', got '" + text + "'");
  return static_cast<int>(n);
}

nlohmann::json world_json(World& world) {
  const auto hosts = world.gather_strings(world.hostname());
  nlohmann::json j = {{"kind", world.kind()}, {"ranks", world.size()}, {"nodes", world.nodes()}, {"hostnames", hosts}};
  if (!world.mpi_thread_level().empty()) j["mpi_thread_level"] = world.mpi_thread_level();
  return j;
}

// What every rank of the process shares, settled before the ranks start.
struct Launch {
  const BenchSpec& spec;
  std::string prog;
  std::string filter;
  std::string filter_source;  // where the filter came from, for messages
  bool listing = false;
  double timeout_s = 0;
  RankFault fault;
};

// Point indices travel from rank 0 (which Google Benchmark drives) to the other ranks: they
// run exactly the points rank 0 runs, in its order (filters, repetitions); -1 ends.
int share_point_index(World& world, int index) {
  if (world.size() == 1) return index;
  std::vector<unsigned char> bytes(sizeof index);
  std::memcpy(bytes.data(), &index, sizeof index);
  world.broadcast(bytes, 0);
  std::memcpy(&index, bytes.data(), sizeof index);
  return index;
}

// Setup steps that each rank runs on its own: the first failure sets the exit code (2 for
// bad input, 1 otherwise) and the message, and later steps are skipped.
struct Steps {
  int code = 0;
  std::string message;
  template <typename F>
  void operator()(F&& f) {
    if (code != 0) return;
    try {
      f();
    } catch (const UsageError& e) {
      code = 2;
      message = e.what();
    } catch (const std::exception& e) {
      code = 1;
      message = e.what();
    }
  }
};

// One rank's run, from its backend to its last row: the whole program for one process,
// and the body of each thread under --threads.
int run_rank(World& world, RunConfig config, const Launch& launch) {
  const BenchSpec& spec = launch.spec;
  const std::string& prog = launch.prog;
  Steps step;
  int code = 0;
  std::unique_ptr<Backend> backend;
  step([&] {
    assign_device(world, config);
    backend = make_backend(config.backend, config.device);
  });
  if ((code = agreed_exit_code(world, step.code, step.message, prog)) != 0) return code;

  Watchdog watchdog(
      launch.timeout_s,
      [&](const std::string& what, double seconds) {
        std::ostringstream line;
        line << prog << ": watchdog: rank " << world.rank() << " of " << world.size() << " on " << world.hostname()
             << ": no progress for " << seconds << " s in " << what
             << "; aborting the communicators and ending this rank (rows measured so far are in "
             << (config.out.empty() ? "no CSV: --out not given" : config.out) << ")";
        write_stderr_line(line.str());
      },
      // Off MPI (only the rank's own thread calls MPI: world.h): this thread ends its own
      // process; the launcher ends the other ranks when one exits non-zero, and each of
      // them has a watchdog of its own that sees the same stall.
      [] {
        std::fflush(nullptr);
        std::_Exit(3);
      });
  Metadata meta(config, *backend);
  std::vector<std::unique_ptr<Op>> ops;
  watchdog.arm("setting up communicators and points");
  step([&] {
    ops = spec.make_world_ops ? spec.make_world_ops(*backend, config, world, watchdog, meta)
                              : spec.make_ops(*backend, config);
  });
  watchdog.disarm();
  if ((code = agreed_exit_code(world, step.code, step.message, prog)) != 0) return code;

  // A run that would measure no point is bad input, decided before --out's files are opened:
  // an existing CSV, its samples and its sidecar stay as they were.
  int selected = 0;
  step([&] {
    for (const auto& op : ops) selected += matches_filter(op->point(), launch.filter) ? 1 : 0;
    if (ops.empty()) throw UsageError("the options select no point to measure");
    if (selected == 0)
      throw UsageError(launch.filter_source + "=" + launch.filter +
                       (launch.filter_source.rfind("--", 0) == 0 ? "" : " (environment)") + " matches none of the " +
                       std::to_string(ops.size()) + " point(s) (--benchmark_list_tests lists them)");
  });
  if ((code = agreed_exit_code(world, step.code, step.message, prog)) != 0) return code;

  std::unique_ptr<CsvSink> csv;
  std::unique_ptr<SamplesSink> samples;
  const std::string json_path = config.out.empty() ? "" : sidecar_path(config.out, ".json");
  step([&] {
    if (spec.add_metadata) spec.add_metadata(meta, *backend);
    meta.doc()["world"] = world_json(world);
    if (!config.out.empty() && !launch.listing && world.is_root()) {
      csv = std::make_unique<CsvSink>(config.out, spec.columns);
      samples = std::make_unique<SamplesSink>(sidecar_path(config.out, ".samples.csv"));
      meta.write(json_path);
    }
  });
  if ((code = agreed_exit_code(world, step.code, step.message, prog)) != 0) return code;
  // Once the input is known good (a bad input stays one line) and something will run.
  if (world.is_root() && !launch.listing)
    for (const auto& w : environment_warnings(meta.doc()["environment"])) std::cerr << prog << ": warning: " << w << "\n";

  try {
    Progress progress(selected, !config.quiet && !launch.listing && world.is_root());
    RunTally tally;
    int points_run = 0;
    const RankFault& fault = launch.fault;
    // The first failed write (disk full, I/O error) stops the run: later points are not
    // measured, since their rows could not be kept. Rows written before it are whole.
    std::string write_failure;
    PointContext ctx{*backend, config, spec.bench,
                     [&](const Row& row, const Measurement* m) {
                       if (fault.kind == "hang-sink" && points_run == fault.point)
                         hang_forever(prog, world.rank(), "hang-sink while writing " + row.get("point"));
                       if (!write_failure.empty()) return;
                       try {
                         // Samples first: a CSV row is the commit, and its samples are already there.
                         if (samples && m)
                           samples->write(row.get("point"), std::atoi(row.get("repetition").c_str()),
                                          m->sample_seconds);
                         if (csv) csv->write(row);
                       } catch (const WriteError& e) {
                         write_failure = e.what();
                       }
                     },
                     &world, &watchdog, nullptr, nullptr};
    std::unique_ptr<Telemetry> telemetry = open_telemetry(backend->info());
    ctx.telemetry = telemetry.get();
    meta.doc()["telemetry"] = telemetry->source();
    // Runs of each point so far: its `repetition` (Google Benchmark repeats a point
    // --benchmark_repetitions times; every rank counts the points rank 0 hands over alike).
    std::vector<int> runs(ops.size(), 0);
    bool fault_fired = false;
    if ((fault.kind == "hang" || fault.kind == "kill") && fault.rank == world.rank())
      ctx.before_launch = [&] {
        if (fault_fired || points_run != fault.point) return;
        fault_fired = true;
        if (fault.kind == "kill") {
          write_stderr_line(prog + ": rank " + std::to_string(world.rank()) + ": injected fault: kill");
          std::raise(SIGKILL);
        }
        hang_forever(prog, world.rank(), fault.kind);
      };
    if (world.is_root()) {
      for (size_t i = 0; i < ops.size(); ++i) {
        Op* raw = ops[i].get();
        const int index = static_cast<int>(i);
        benchmark::RegisterBenchmark(raw->point().c_str(),
                                     [raw, index, &world, &ctx, &tally, &progress, &points_run, &write_failure,
                                      &watchdog, &runs](benchmark::State& state) {
                                       if (!write_failure.empty()) {
                                         state.SkipWithError("not run: an earlier row could not be written");
                                         return;
                                       }
                                       watchdog.arm("handing point " + raw->point() + " to the other ranks");
                                       share_point_index(world, index);
                                       ctx.repetition = runs[static_cast<size_t>(index)]++;
                                       progress.start_point(raw->point());
                                       run_point(*raw, ctx, &state, tally);
                                       progress.finish_point();
                                       ++points_run;
                                     })
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMicrosecond);
      }
      benchmark::RunSpecifiedBenchmarks();
      watchdog.arm("ending the run on every rank");
      share_point_index(world, -1);
    } else {
      for (int index;;) {
        watchdog.arm("waiting for rank 0's next point (rank 0 may be writing a row)");
        if ((index = share_point_index(world, 0)) < 0) break;
        if (static_cast<size_t>(index) >= ops.size()) throw std::logic_error("rank 0 ran a point this rank lacks");
        ctx.repetition = runs[static_cast<size_t>(index)]++;
        run_point(*ops[static_cast<size_t>(index)], ctx, nullptr, tally);
        ++points_run;
      }
    }
    code = tally.failures > 0 || !write_failure.empty() ? 1 : 0;
    if (csv) {
      watchdog.arm("writing the sidecar " + json_path);
      meta.finish(tally.rows, tally.failures, code);
      try {
        // A failed write keeps the sidecar of the run's start (write_file_atomic).
        if (write_failure.empty()) meta.write(json_path);
        csv->close();
        samples->close();
      } catch (const WriteError& e) {
        write_failure = e.what();
        code = 1;
      }
    }
    watchdog.disarm();
    if (!write_failure.empty()) {
      write_stderr_line(prog + ": error: " + write_failure + "; the run stopped after " + std::to_string(tally.rows) +
                        " point(s), and the rows written before the failure are whole");
      return 1;
    }
    if (tally.failures > 0 && world.is_root())
      write_stderr_line(prog + ": " + std::to_string(tally.failures) + " of " + std::to_string(tally.rows) +
                        " points failed (see status_detail)");
    return code;
  } catch (const UsageError& e) {
    // Past setup every rank is in step; an error here may be this rank's alone.
    write_stderr_line(prog + ": error: " + e.what());
    if (world.size() > 1) world.abort(2);
    return 2;
  } catch (const std::exception& e) {
    write_stderr_line(prog + ": error: " + e.what());
    if (world.size() > 1) world.abort(1);
    return 1;
  }
}

}  // namespace

int bench_main(int argc, char** argv, const BenchSpec& spec) {
  const std::string prog = "bench_" + spec.bench;
  // Before MPI or any library allocates: every point then sees the same allocator (malloc_policy.h).
  MallocPolicy malloc_in_effect;
  try {
    const MallocPolicy asked = malloc_policy_from_env(std::getenv);
    malloc_in_effect = apply_malloc_policy(asked);
    if (asked.sets_mallopt && !malloc_in_effect.sets_mallopt)
      write_stderr_line(prog + ": warning: " + malloc_in_effect.reason);
  } catch (const UsageError& e) {
    write_stderr_line(prog + ": error: " + e.what());
    return 2;
  }
  std::unique_ptr<World> world_owner = make_world(&argc, &argv);
  World& world = *world_owner;
  RunConfig config;
  config.malloc = malloc_in_effect;
  config.bench = spec.bench;
  for (int i = 0; i < argc; ++i) config.command_line.push_back(argv[i]);
  CLI::App app(spec.description, prog);
  add_common_options(app, config);
  Launch launch{spec, prog, "", "", false, spec.default_timeout_s, {}};
  std::string rank_fault_text, threads_text;
  if (spec.make_world_ops) {
    add_number(app, "--timeout", launch.timeout_s,
               "seconds without progress (a collective that does not finish, a row write that hangs) before the "
               "watchdog reports, aborts the communicators and exits non-zero; 0: off",
               {.min = 0, .max = 1e6})
        ->capture_default_str();
    app.add_option("--threads", threads_text,
                   "single-process launch: N ranks as threads of this process, one GPU each from --device on "
                   "(all: every visible GPU; host backend: threads on host memory); not under mpirun");
    app.add_option("--inject-rank-fault", rank_fault_text, "test only: hang-rank=R[@P] or kill-rank=R[@P]")->group("");
    app.add_option("--combine", config.combine,
                   "each sample across ranks: max (the slowest rank), avg (nccl-tests -a 1, OSU's average), min")
        ->capture_default_str();
  }
  if (spec.add_options) spec.add_options(app);
  app.footer(
      "Google Benchmark flags also apply: --benchmark_filter=REGEX, --benchmark_list_tests (runs and writes "
      "nothing), --benchmark_format=console|json|csv, --benchmark_out=FILE (not a file --out writes), "
      "--benchmark_out_format=json|console|csv, --benchmark_time_unit=ns|us|ms|s, "
      "--benchmark_repetitions=N >= 1 (rows keep the point key, with a repetition column), "
      "--benchmark_min_time=S|Ss (= --min-time-per-point S) or Nx (= --min-samples N), "
      "--benchmark_min_warmup_time=S (= --warmup-time S).");
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      if (world.is_root()) std::cout << app.help();
      return 0;
    }
  // Google Benchmark's flags, read as the library reads them; the ones the driver takes
  // over are removed before the library sees the arguments (core/driver/gbench_flags.h).
  std::vector<std::string> args(argv, argv + argc);
  const GbenchFlags gb = take_gbench_flags(args, [](const char* name) { return std::getenv(name); });
  launch.filter = gb.filter;
  launch.filter_source = gb.filter_source;
  launch.listing = gb.list_tests;
  std::vector<char*> arg_ptrs;
  for (auto& a : args) arg_ptrs.push_back(a.data());
  int arg_count = static_cast<int>(arg_ptrs.size());
  // Not on a value the library would answer with its usage text (and exit 0) or its own
  // message: the error below is the one line.
  if (gb.error.empty()) benchmark::Initialize(&arg_count, arg_ptrs.data());  // keeps argv[0]: `args` outlives it

  // Parsing, on each process; every rank learns whether any rank failed.
  Steps step;
  int threads = 0;
  bool informational = false;
  step([&] {
    if (!gb.error.empty()) throw UsageError(gb.error);
    try {
      if (const std::string why = missing_option_value(app, arg_count, arg_ptrs.data()); !why.empty())
        throw UsageError(why);
      app.parse(arg_count, arg_ptrs.data());
    } catch (const CLI::ParseError& e) {
      throw UsageError(e.what());
    }
    if (gb.min_time_s) config.measure.min_time_s = *gb.min_time_s;
    if (gb.min_iterations) config.measure.min_samples = std::max(config.measure.min_samples, *gb.min_iterations);
    if (gb.min_warmup_time_s) config.measure.warmup_time_s = *gb.min_warmup_time_s;
    finalize_config(config);
    try {
      matches_filter("", launch.filter);  // an invalid regex is bad input, before anything runs
    } catch (const std::regex_error& e) {
      throw UsageError("--benchmark_filter: '" + launch.filter + "' is not a valid regular expression (" + e.what() +
                       ")");
    }
    parse_combine(config.combine);
    if (!launch.listing) refuse_output_clash(gb.out, config.out);
    launch.fault = parse_rank_fault(rank_fault_text);
    threads = resolve_threads(threads_text, config, world);
    informational = spec.before_run && spec.before_run(config);  // e.g. --list: exit 0
  });
  if (step.code == 0 && informational) return 0;
  int code = agreed_exit_code(world, step.code, step.message, prog);
  if (code != 0) return code;

  if (threads == 0) {
    code = run_rank(world, config, launch);
  } else {
    // One thread per rank; this thread is rank 0, which Google Benchmark drives.
    auto worlds = make_thread_worlds(threads);
    std::vector<int> codes(static_cast<size_t>(threads), 0);
    std::vector<std::thread> others;
    for (int r = 1; r < threads; ++r)
      others.emplace_back([&, r] { codes[static_cast<size_t>(r)] = run_rank(*worlds[static_cast<size_t>(r)], config, launch); });
    codes[0] = run_rank(*worlds[0], config, launch);
    for (auto& t : others) t.join();
    code = *std::max_element(codes.begin(), codes.end());
  }
  benchmark::Shutdown();
  return code;
}

}  // namespace gpucal
