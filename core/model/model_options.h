// `--model NAME | --model-config FILE` and the layout flags, for every bench through one
// helper. A bench's main makes one ModelOptions naming its share of the step and the flags
// of its own that --model replaces, and calls attach(spec) before bench_main. attach():
//  - appends the CSV columns op_role and calls_per_step (empty on runs without --model);
//  - adds the flags; a flag the bench already has (--seq, --dtype, --list) is shared: with
//    --model it means the model's (one sequence length; dtype `auto` = fp32 on the host
//    backend, bf16 on GPUs);
//  - before the run: derives and validates the step (bad input: one line, exit 2), and with
//    --list prints this bench's operations (--list-all: every bench's, with the step's
//    facts) and exits;
//  - tags each op the bench makes with the roles and calls of the derived operation whose
//    shape it measures (matched on the row cells of ModelOp::shape_cells()), so every row
//    says which operations of the step it stands for;
//  - writes the derivation into the sidecar under `model`.
// With --model the bench makes its ops from groups() (or groups_for_world() for the benches
// that run across ranks) instead of its own axes: one op per distinct shape.
//
// bench_memory makes its points from groups() (memory.kernel, rows, cols, params, and bytes as
// the read kernel's array bytes); its rows carry the cells ModelOp::shape_cells() names for
// memory ops (kernel, dtype, and rows, cols, params, array_bytes where non-zero).
#pragma once
#include <ostream>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/driver/driver.h"
#include "core/model/workload.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gpucal::model {

struct ModelBinding {
  std::string bench;                        // gemm | attention | memory | collectives | p2p
  std::vector<std::string> replaced_flags;  // the bench's own axes, which --model replaces
};

// The step's facts as '#' lines, then one CSV line per op (bench, op_role, calls_per_step, dtype,
// shape, flops_per_call): what --list and --list-all print.
void print_workload(std::ostream& out, const Workload& w, const std::vector<ModelOp>& ops);

class ModelOptions {
 public:
  explicit ModelOptions(ModelBinding binding);
  ~ModelOptions();
  void attach(BenchSpec& spec);

  bool active() const;
  // The derived step (after the bench's before_run, i.e. inside make_ops / make_world_ops).
  const Workload& workload() const;
  // This bench's share: one group per distinct shape, roles merged.
  std::vector<OpGroup> groups() const;
  // Of groups(), those `why_not` accepts (it returns "" for a runnable op, else the reason,
  // e.g. too few ranks). The others are printed on stderr when `print` (rank 0) and listed
  // in the sidecar's model.skipped.
  std::vector<OpGroup> groups_for_world(const std::function<std::string(const ModelOp&)>& why_not,
                                        Metadata& meta, bool print) const;

  // Wraps ops so their rows carry op_role and calls_per_step; throws std::logic_error for an
  // op no derived operation matches (a bench made a shape the step does not have).
  std::vector<std::unique_ptr<Op>> tag(std::vector<std::unique_ptr<Op>> ops) const;

 private:
  void add_flags(CLI::App& app);
  void resolve(const RunConfig& config);  // validates; fills workload_
  void print_list() const;
  nlohmann::json sidecar() const;

  ModelBinding binding_;
  struct Flags;
  std::unique_ptr<Flags> flags_;
  std::optional<Workload> workload_;
};

// `--dtype auto` with --model: fp32 on the host backend (no bf16 BLAS), bf16 on GPUs.
DType resolve_model_dtype(const std::string& text, const std::string& backend_name);
// `--grad-dtype auto`: fp32 for bf16 (Megatron-LM's arguments.py forces fp32 gradient
// all-reduce for bf16), else the dtype (fp16 training reduces in fp16 by default).
DType resolve_grad_dtype(const std::string& text, DType dtype);

}  // namespace gpucal::model
