#include "core/driver/run_rank.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "core/driver/point_filter.h"
#include "core/driver/point_loop.h"
#include "core/driver/rank_agreement.h"
#include "core/driver/rank_placement.h"
#include "core/driver/run_sinks.h"
#include "core/measure/telemetry.h"
#include "core/output/file_io.h"

namespace gpucal {

namespace {

// The watchdog's report: which rank stalled where, and where its rows are.
std::function<void(const std::string&, double)> watchdog_report(const std::string& prog, World& world,
                                                                const std::string& out) {
  return [prog, w = &world, out](const std::string& what, double seconds) {
    std::ostringstream line;
    line << prog << ": watchdog: rank " << w->rank() << " of " << w->size() << " on " << w->hostname()
         << ": no progress for " << seconds << " s in " << what
         << "; aborting the communicators and ending this rank (rows measured so far are in "
         << (out.empty() ? "no CSV: --out not given" : partial_path(out)) << ")";
    write_stderr_line(line.str());
  };
}

// Off MPI (only the rank's own thread calls MPI: world.h): this thread ends its own process;
// the launcher ends the other ranks when one exits non-zero, and each of them has a watchdog
// of its own that sees the same stall.
void end_this_process() {
  std::fflush(nullptr);
  std::_Exit(3);
}

// The rank after setup: its backend, watchdog, sidecar, points and sinks.
class RankRun {
 public:
  RankRun(World& world, RunConfig config, const Launch& launch, std::unique_ptr<Backend> backend)
      : world_(world),
        config_(std::move(config)),
        launch_(launch),
        prog_(launch.prog),
        backend_(std::move(backend)),
        watchdog_(launch.timeout_s, watchdog_report(prog_, world, config_.out), end_this_process),
        meta_(config_, *backend_) {}

  int run() {
    int code = 0;
    if ((code = make_ops()) != 0) return code;
    if ((code = agreed_step(world_, steps_, prog_, [&] { select_points(); })) != 0) return code;
    if ((code = agreed_step(world_, steps_, prog_, [&] { open_sinks(); })) != 0) return code;
    warn_about_environment();
    try {
      return measure_points();
    } catch (const UsageError& e) {
      // Past setup every rank is in step; an error here may be this rank's alone.
      return end_with_error(e.what(), 2);
    } catch (const std::exception& e) {
      return end_with_error(e.what(), 1);
    }
  }

 private:
  // The points: the bench's ops, made while the watchdog watches (communicators bootstrap).
  int make_ops() {
    watchdog_.arm("setting up communicators and points");
    steps_([&] {
      ops_ = launch_.spec.make_world_ops
                 ? launch_.spec.make_world_ops(*backend_, config_, world_, watchdog_, meta_)
                 : launch_.spec.make_ops(*backend_, config_);
    });
    watchdog_.disarm();
    return agreed_exit_code(world_, steps_.code, steps_.message, prog_);
  }

  void select_points() { selected_ = count_selected(ops_, launch_.filter, launch_.filter_source); }

  void open_sinks() {
    if (launch_.spec.add_metadata) launch_.spec.add_metadata(meta_, *backend_);
    meta_.doc()["world"] = world_json(world_);
    sinks_.open(config_, launch_.spec.columns, meta_,
                !config_.out.empty() && !launch_.listing && world_.is_root());
  }

  // Once the input is known good (a bad input stays one line) and something will run. --quiet
  // leaves stderr to errors: the sidecar's `environment` records the variables either way.
  void warn_about_environment() {
    if (world_.is_root() && !launch_.listing && !config_.quiet)
      for (const auto& w : environment_warnings(meta_.doc()["environment"]))
        std::cerr << prog_ << ": warning: " << w << "\n";
  }

  int measure_points() {
    Progress progress(selected_, !config_.quiet && !launch_.listing && world_.is_root());
    RunTally tally;
    PointContext ctx{*backend_, config_, launch_.spec.bench, nullptr, &world_, &watchdog_, nullptr, nullptr};
    PointLoop loop{world_, watchdog_, ctx, tally, sinks_, std::vector<int>(ops_.size(), 0)};
    const RankFault& fault = launch_.fault;
    ctx.emit = [&](const Row& row, const Measurement* m) {
      if (fault.kind == "hang-sink" && loop.points_run == fault.point)
        hang_forever(prog_, world_.rank(), "hang-sink while writing " + row.get("point"));
      sinks_.write(row, m);
    };
    std::unique_ptr<Telemetry> telemetry = open_telemetry(backend_->info());
    ctx.telemetry = telemetry.get();
    meta_.doc()["telemetry"] = telemetry->source();
    ctx.before_launch = launch_fault_hook(fault, prog_, world_.rank(), loop.points_run);
    if (world_.is_root())
      run_points_as_root(ops_, loop, progress);
    else
      run_points_as_follower(ops_, loop);
    return finish(tally);
  }

  int finish(const RunTally& tally) {
    const int code = sinks_.finish(meta_, tally, watchdog_,
                                   launch_.spec.summary_files ? launch_.spec.summary_files() : Summaries{});
    watchdog_.disarm();
    if (!sinks_.write_failure().empty()) {
      write_stderr_line(prog_ + ": error: " + sinks_.write_failure() + "; the run stopped after " +
                        std::to_string(tally.rows) + " point(s); " + sinks_.leftover());
      return 1;
    }
    if (tally.failures > 0 && world_.is_root())
      write_stderr_line(prog_ + ": " + std::to_string(tally.failures) + " of " + std::to_string(tally.rows) +
                        " points failed (see status_detail)");
    return code;
  }

  int end_with_error(const std::string& what, int code) {
    write_stderr_line(prog_ + ": error: " + what);
    if (world_.size() > 1) world_.abort(code);
    return code;
  }

  World& world_;
  RunConfig config_;
  const Launch& launch_;
  const std::string& prog_;
  std::unique_ptr<Backend> backend_;
  Watchdog watchdog_;
  Metadata meta_;
  Steps steps_;
  std::vector<std::unique_ptr<Op>> ops_;
  int selected_ = 0;
  RunSinks sinks_;
};

}  // namespace

int run_rank(World& world, RunConfig config, const Launch& launch) {
  Steps steps;
  std::unique_ptr<Backend> backend;
  const int code = agreed_step(world, steps, launch.prog, [&] {
    assign_device(world, config);
    backend = make_backend(config.backend, config.device);
  });
  if (code != 0) return code;
  return RankRun(world, std::move(config), launch, std::move(backend)).run();
}

}  // namespace gpucal
