// Where the ranks run: how many rank threads one process starts (--threads), which GPU each
// rank drives, and the World's description for the sidecar.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/driver/run_config.h"
#include "core/world/world.h"

namespace gpucal {

// Under MPI or --threads with a GPU backend, each rank drives the GPU of its local rank
// (offset by --device); more ranks on a node than GPUs is an input error.
void assign_device(World& world, RunConfig& config);

// --threads: "" (off: one rank per process), "all" (one thread per visible GPU from
// --device on) or a count; 0 means off.
int resolve_threads(const std::string& text, const RunConfig& config, World& world);

// The sidecar's "world": kind, ranks, nodes, every rank's host name.
nlohmann::json world_json(World& world);

}  // namespace gpucal
