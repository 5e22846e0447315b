// How `gpucal run` starts the communication benches (collectives, p2p), decided once before any
// bench runs:
//   --mpirun PREFIX           that launcher;
//   --threads N|all           one process, N rank threads;
//   neither, inside a Slurm allocation of 2+ tasks (SLURM_JOB_ID, SLURM_NTASKS): srun, one
//                             rank per task; inside a PBS or LSF allocation (PBS_JOBID, LSB_JOBID)
//                             with mpirun on PATH: mpirun, one rank per allocated slot;
//   neither, otherwise        one process on this node: a thread per local GPU, or
//                             kHostThreads threads over host memory where there is no GPU.
// gpucal started as a rank itself (OMPI_COMM_WORLD_SIZE, PMI_RANK, PMIX_RANK) starts no launcher
// inside the launch: threads on this node. With one rank (a single local GPU, --threads 1 or
// --threads all on a node with one GPU) there is no group to measure within the node: the
// communication benches run only what needs no group (BenchInvocation::single_args, the
// copies), the predicted step is laid out on one GPU, and the exports that need a group are
// not applicable (said why).
#pragma once
#include <functional>
#include <string>

#include "app/run/run_suite.h"

namespace gpucal::calibration {

constexpr int kHostThreads = 4;

struct LaunchPlan {
  std::string mpirun;   // launcher prefix; empty: --threads
  std::string threads;  // --threads value, when no launcher
  std::string how;      // one line: what starts the communication benches, and why
  std::string skip;     // non-empty: one rank, no group to measure; why, in words
  bool gpu = false;     // the benches run on a GPU backend (BenchInvocation::gpu_args)
};

using EnvLookup = std::function<const char*(const char*)>;

// local_gpus: GPUs the benches' backend sees on this node (0 for the host backend); the caller
// counts them when neither --mpirun nor a thread count is given.
LaunchPlan plan_launch(const RunOptions& options, const EnvLookup& env, int local_gpus);

// GPUs of `backend` (auto | cuda | hip | host) this process sees: 0 for host or none.
int local_gpu_count(const std::string& backend);

// An executable path, or a name found in one of PATH's folders.
bool program_found(const std::string& program);

}  // namespace gpucal::calibration
