// HIP build of the portable flash attention kernels (gpucal::attention::hip).
#define GPUCAL_GPU_HIP 1
#include "bench_attention/flash_kernels.cuh"
