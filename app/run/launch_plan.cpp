#include "app/run/launch_plan.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/backend/backend.h"

namespace gpucal::calibration {

namespace fs = std::filesystem;

bool program_found(const std::string& program) {
  auto executable = [](const fs::path& p) {
    return fs::is_regular_file(p) && ::access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) return executable(program);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (executable(fs::path(dir.empty() ? "." : dir) / program)) return true;
  return false;
}

int local_gpu_count(const std::string& backend) {
  if (backend == "host") return 0;
  const std::string name = backend == "auto" ? resolve_backend_name("auto") : backend;
  return name == "host" ? 0 : gpu_device_count(name);
}

namespace {

std::string value_of(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v ? v : "";
}

// A launcher for the allocation gpucal runs in, or empty.
LaunchPlan allocation_launcher(const EnvLookup& env) {
  const std::string job = value_of(env, "SLURM_JOB_ID");
  if (!job.empty() && std::atoi(value_of(env, "SLURM_NTASKS").c_str()) >= 2 && program_found("srun"))
    return {.mpirun = "srun",
            .how = "srun: inside Slurm allocation " + job +
                   ", one rank per task (SLURM_NTASKS = " + value_of(env, "SLURM_NTASKS") + ")"};
  for (const char* var : {"PBS_JOBID", "LSB_JOBID"})
    if (!value_of(env, var).empty() && program_found("mpirun"))
      return {.mpirun = "mpirun",
              .how = std::string("mpirun: inside a batch allocation (") + var + " = " + value_of(env, var) +
                     "), one rank per allocated slot"};
  return {};
}

bool started_as_rank(const EnvLookup& env) {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMIX_RANK"})
    if (env(var)) return true;
  return false;
}

}  // namespace

LaunchPlan plan_launch(const RunOptions& o, const EnvLookup& env, int local_gpus) {
  if (!o.mpirun.empty()) return {.mpirun = o.mpirun, .how = "under --mpirun '" + o.mpirun + "'"};
  if (o.threads == "1" || (o.threads == "all" && local_gpus == 1))
    return {.threads = "1",
            .how = "one rank (--threads " + o.threads + ")",
            .skip = o.threads == "1" ? "--threads 1: one rank, no group to measure (give 2 or more)"
                                     : "one GPU on this node, no group to measure within it (give --mpirun to "
                                       "measure across nodes)"};
  if (!o.threads.empty() && o.threads != "auto")
    return {.threads = o.threads, .how = o.threads + " rank threads in one process (--threads)"};
  const bool rank = started_as_rank(env);
  // --threads auto: this node's own ranks whatever allocation it is in (a fleet's node phase).
  if (!rank && o.threads != "auto")
    if (LaunchPlan allocated = allocation_launcher(env); !allocated.mpirun.empty()) return allocated;
  const std::string why = rank ? " (gpucal runs as a rank of a launch: no launcher inside it)"
                          : o.threads == "auto" ? " (--threads auto)" : "";
  if (local_gpus >= 2)
    return {.threads = "all",
            .how = "one process, a thread per local GPU (" + std::to_string(local_gpus) + ")" + why};
  if (local_gpus == 1)
    return {
        .how = "one local GPU" + why,
        .skip =
            "one GPU on this node, no group to measure within it (give --mpirun to measure across nodes)"};
  return {.threads = std::to_string(kHostThreads),
          .how = "one process, " + std::to_string(kHostThreads) + " threads over host memory (no GPU)" + why};
}

}  // namespace gpucal::calibration
