// How the ranks of a World stay in step before and between points: setup steps that each rank
// runs on its own end with one agreed exit code, and rank 0 hands each point's index to the
// others (core/driver/driver.h: every rank makes the same decisions in the same order).
#pragma once

#include <string>
#include <utility>

#include "core/errors.h"
#include "core/world/world.h"

namespace gpucal {

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

// After a setup step that each rank ran on its own: when it failed anywhere, rank 0 prints
// the first failing rank's message and every rank gets the same exit code, so no rank goes
// on alone into a collective.
int agreed_exit_code(World& world, int local_code, const std::string& local_msg, const std::string& prog);

// Runs one more setup step and agrees on the outcome so far: 0, or the exit code every rank
// returns.
template <typename F>
int agreed_step(World& world, Steps& steps, const std::string& prog, F&& f) {
  steps(std::forward<F>(f));
  return agreed_exit_code(world, steps.code, steps.message, prog);
}

// Point indices travel from rank 0 (which Google Benchmark drives) to the other ranks: they
// run exactly the points rank 0 runs, in its order (filters, repetitions); -1 ends.
int share_point_index(World& world, int index);

}  // namespace gpucal
