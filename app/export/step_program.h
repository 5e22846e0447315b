// One pipeline stage's training step as the calls each of its ranks makes, in order, with the
// dependencies `gpucal predict` assumes (app/predict/step_time.h), for the workload exports:
//  - the schedule: 1F1B, or Megatron-LM's interleaved schedule with v model chunks per rank
//    (its warm-up forwards, then a forward and a backward in turn, then the last backwards);
//    a forward receives its input from the previous stage (the interleaved schedule's first
//    stage from the last one, chunk c - 1) and sends its output on; a backward the reverse;
//  - a forward or backward: the stage's layers in order (backward: reversed), each layer the
//    calls of the derived operations that run per layer, in derivation order; the embedding's
//    operations before the first layer, the logits' and loss's after the last;
//  - once per step, after the pipeline drains: the gradient reductions, the sequence-parallel
//    and embedding all-reduces, the gradient norm and optimizer, the parameter all-gathers.
// Every node waits for the one before it (a chain), except what the overlap policy hides:
//  tp  the pipeline's TP messages leave the chain: each waits for the call before it and for
//      the previous message off the chain; the chain waits for them at the end of the forward
//      or backward;
//  dp  the DP gradient buckets run during the last backward, bucket j of B after (j + 1) / B
//      of its compute (the last after all of it), off the chain; ZeRO-3's gathers and
//      reduce-scatters leave the chain like TP's.
// Every rank of a stage runs the same program, so its collectives come in the same order on
// every rank of a group.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/predict/step_time.h"
#include "core/model/workload.h"

namespace gpucal::calibration {

struct ProgramNode {
  enum class Kind { compute, collective, send, recv };
  Kind kind = Kind::compute;
  std::size_t op = 0;          // index into StageProgram::ops: the operation this node is one call of
  int64_t micro_batch = -1;    // -1: once per step
  int64_t chunk = 0;           // model chunk (interleaved schedule)
  int64_t layer = -1;          // the model layer (-1: outside the layers)
  bool backward = false;
  std::vector<std::size_t> deps;  // earlier nodes of the program it waits for
  // send / recv: the pipeline stage of the other end (a context-parallel ring message: -1, the
  // next rank of the cp group for a send, the previous for a recv), and the tag both ends share.
  int64_t peer_stage = -1;
  int64_t tag = 0;
  bool overlapped = false;  // off the chain (the overlap policy)
};

// An operation of the stage with its cost, as `gpucal predict` costs it (app/predict/op_cost.h).
struct ProgramOp {
  model::ModelOp op;
  double time_us = 0;      // one call
  std::string provenance;  // measured | interpolated | extrapolated
  std::string method;      // how the time was found
};

struct StageProgram {
  model::Workload workload;               // the stage's derivation
  std::vector<ProgramOp> ops;             // its operations, costed
  std::vector<std::string> added_roles;   // pipeline messages the interleaved schedule adds
  int64_t chunks = 1;                     // model chunks per rank (interleaved: v)
  std::vector<ProgramNode> nodes;         // in dependency order
};

// The most nodes one rank's program may hold (about 100 bytes each in memory, more in a trace
// file): build_stage_program refuses a step that would exceed it, naming --global-batch.
constexpr std::size_t kMaxProgramNodes = 4000000;

// `ops`: the workload's operations, costed, in derivation order. UsageError for a schedule
// the stage cannot run (predict::validate_schedule).
StageProgram build_stage_program(model::Workload workload, std::vector<ProgramOp> ops,
                                 const predict::OverlapPolicy& overlap, const predict::Schedule& schedule);

// Megatron-LM's order of forwards and backwards on stage `stage` of `stages`, m micro-batches,
// v chunks (v = 1: 1F1B).
struct ScheduleStep {
  bool forward = true;
  int64_t micro_batch = 0, chunk = 0;
};
std::vector<ScheduleStep> pipeline_order(int64_t stages, int64_t stage, int64_t micro_batches, int64_t chunks);

}  // namespace gpucal::calibration
