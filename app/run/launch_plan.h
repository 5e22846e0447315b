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
// inside the launch: threads on this node. With a single local GPU there is no group to
// measure within the node, so the communication benches are skipped (said why).
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
  std::string skip;     // non-empty: the communication benches are not run, and why
};

using EnvLookup = std::function<const char*(const char*)>;

// local_gpus: GPUs the benches' backend sees on this node (0 for the host backend).
LaunchPlan plan_launch(const RunOptions& options, const EnvLookup& env, int local_gpus);

// GPUs of `backend` (auto | cuda | hip | host) this process sees: 0 for host or none.
int local_gpu_count(const std::string& backend);

// An executable path, or a name found in one of PATH's folders.
bool program_found(const std::string& program);

}  // namespace gpucal::calibration
