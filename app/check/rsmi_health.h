// The GPU half of `gpucal check --health` on an AMD node: ROCm SMI (librocm_smi64, opened at run
// time like NVML, so gpucal runs where no ROCm is installed) read for every GPU: ECC counts summed
// over the blocks with ECC enabled, bad pages pending retirement or unretirable, PCIe transfer rate
// and lanes against the fastest the device lists, the junction temperature against its critical
// limit, and the XGMI error status. The calls are ROCm SMI's documented API, compiled against its
// own header (rocm_smi/rocm_smi.h, Debian's librocm-smi-dev) where it is installed; ROCm SMI 5.x
// gives no clock event reasons gpucal reads, so gpu_clock_slowdown is "not available" there.
#pragma once
#include "app/check/health.h"

namespace gpucal::check {

// Fills into.gpus, or says in into.gpu_source why there are none (no library, no GPU, an error,
// or a gpucal built without the header).
void read_rsmi_health(HealthReadings& into);

// The PCIe generation (1-6) of a per-lane transfer rate in transfers/s; 0 when it is none of them.
unsigned pcie_generation_of_rate(double transfers_per_s);

}  // namespace gpucal::check
