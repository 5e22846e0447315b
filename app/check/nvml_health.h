// The GPU half of `gpucal check --health` on an NVIDIA node: NVML (libnvidia-ml.so.1, the driver's
// own library, opened at run time so that gpucal runs where no driver is installed) read for every
// GPU: volatile ECC counts, row remapping (or page retirement), PCIe generation and width against
// their maxima, clock event reasons, temperature against the GPU's own slowdown threshold, and
// each NVLink's state and replay/recovery/CRC counters. The calls and their constants are NVML's
// documented API (nvml.h); gpucal declares the few it uses, as the library is loaded by name.
// An AMD node's GPUs are read by ROCm SMI (app/check/rsmi_health.h).
#pragma once
#include "app/check/health.h"

namespace gpucal::check {

// Fills into.gpus, or says in into.gpu_source why there are none (no library, no GPU, an error).
void read_nvml_health(HealthReadings& into);

}  // namespace gpucal::check
