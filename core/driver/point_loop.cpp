#include "core/driver/point_loop.h"

#include <benchmark/benchmark.h>

#include <stdexcept>

#include "core/driver/gbench_context.h"
#include "core/driver/rank_agreement.h"

namespace gpucal {

void run_points_as_root(const std::vector<std::unique_ptr<Op>>& ops, PointLoop& loop, Progress& progress) {
  GbenchContextFilter context(loop.ctx.config.quiet);
  for (size_t i = 0; i < ops.size(); ++i) {
    Op* raw = ops[i].get();
    const int index = static_cast<int>(i);
    benchmark::RegisterBenchmark(raw->point().c_str(),
                                 [raw, index, &loop, &progress, &context](benchmark::State& state) {
                                   context.release();
                                   if (!loop.sinks.write_failure().empty()) {
                                     state.SkipWithError("not run: an earlier row could not be written");
                                     return;
                                   }
                                   loop.watchdog.arm("handing point " + raw->point() + " to the other ranks");
                                   share_point_index(loop.world, index);
                                   loop.ctx.repetition = loop.runs[static_cast<size_t>(index)]++;
                                   progress.start_point(raw->point());
                                   run_point(*raw, loop.ctx, &state, loop.tally);
                                   progress.finish_point();
                                   ++loop.points_run;
                                 })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  context.release();
  loop.watchdog.arm("ending the run on every rank");
  share_point_index(loop.world, -1);
}

void run_points_as_follower(const std::vector<std::unique_ptr<Op>>& ops, PointLoop& loop) {
  for (int index;;) {
    loop.watchdog.arm("waiting for rank 0's next point (rank 0 may be writing a row)");
    if ((index = share_point_index(loop.world, 0)) < 0) break;
    if (static_cast<size_t>(index) >= ops.size())
      throw std::logic_error("rank 0 ran a point this rank lacks");
    loop.ctx.repetition = loop.runs[static_cast<size_t>(index)]++;
    run_point(*ops[static_cast<size_t>(index)], loop.ctx, nullptr, loop.tally);
    ++loop.points_run;
  }
}

}  // namespace gpucal
