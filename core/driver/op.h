// What a bench knows about one sweep point and nothing else: its parameters, how to set
// it up (untimed), launch it once, check it, and turn a measured time into throughput.
// The driver owns the order: describe -> setup -> verify -> measure(launch) -> annotate.
#pragma once

#include <string>

#include "core/backend/backend.h"
#include "core/measure/measurement.h"
#include "core/output/row.h"
#include "core/driver/run_config.h"

namespace gpucal {

struct Verification {
  std::string status = "skipped";  // ok | fail | skipped
  double max_rel_err = 0;
  std::string detail{};  // why it failed or was skipped
};

class Op {
 public:
  virtual ~Op() = default;
  // Unique, stable key of the point ("gemm/host/fp32/NN/m64/n256/k128/b1/cold"): the
  // Google Benchmark name and the CSV `point` column.
  virtual std::string point() const = 0;
  virtual std::string impl() const = 0;
  // Parameter cells, known before anything runs.
  virtual void describe(Row& row) const = 0;
  // Allocations, inputs, descriptors, algorithm choice. Throws SkipPoint when the point
  // cannot run here.
  virtual void setup(Backend& backend, const RunConfig& config) = 0;
  // Poison the outputs, launch once, compare with a reference.
  virtual Verification verify() = 0;
  // One launch, asynchronous on the backend's stream.
  virtual void launch() = 0;
  // Throughput cells from the measurement. May throw nothing; returns false when the
  // result is implausible (above peak), which makes the row an error.
  virtual bool annotate(Row& row, const Measurement& m) const = 0;
  // Frees what setup allocated, so the next point has the memory.
  virtual void teardown() = 0;
  // False on a rank that does no work in this point (idle in a pair, outside the point's
  // --ranks group): it still takes part in every agreement, but its times are left out
  // of the combination across ranks. Asked after setup.
  virtual bool takes_part() const { return true; }
};

}  // namespace gpucal
