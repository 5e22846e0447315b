#include "core/driver/rank_placement.h"

#include <cstdlib>

#include "core/backend/backend.h"
#include "core/errors.h"

namespace gpucal {

namespace {

// The GPU runtime --backend resolves to ("" for the host; auto: a runtime with any device).
std::string gpu_runtime_of(const RunConfig& config) {
  const std::string name = resolve_backend_name(config.backend);
  return name == "host" ? "" : name;
}

}  // namespace

void assign_device(World& world, RunConfig& config) {
  const bool threads = world.kind() == "threads";
  // The host backend has one device: a --device it would ignore is refused, not dropped
  // (--backend auto with a device the GPUs lack would quietly run on the host).
  if (config.device != 0 && resolve_backend_name(config.backend, config.device) == "host") {
    const std::string gpu = gpu_runtime_of(config);
    throw UsageError("--device " + std::to_string(config.device) + ": " +
                     (gpu.empty() ? "the host backend has one device, 0 (a GPU device needs --backend cuda or hip)"
                                  : gpu + " has " + std::to_string(gpu_device_count(gpu)) +
                                        " usable device(s); --backend auto would run on the host instead"));
  }
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
    throw UsageError(std::to_string(world.local_size()) + " ranks on node " + world.hostname() +
                     " but only " + std::to_string(count) + " usable " + gpu + " device(s)" + from);
  }
  config.device = device;
}

int resolve_threads(const std::string& text, const RunConfig& config, World& world) {
  if (text.empty()) return 0;
  if (world.size() > 1)
    throw UsageError(
        "--threads runs every rank as a thread of one process; under mpirun/srun start one rank per "
        "GPU instead (not both)");
  if (text == "all") {
    const std::string gpu = gpu_runtime_of(config);
    if (gpu.empty())
      throw UsageError("--threads all counts GPUs, and this run has none (host backend): give a count");
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
  nlohmann::json j = {
      {"kind", world.kind()}, {"ranks", world.size()}, {"nodes", world.nodes()}, {"hostnames", hosts}};
  if (!world.mpi_thread_level().empty()) j["mpi_thread_level"] = world.mpi_thread_level();
  return j;
}

}  // namespace gpucal
