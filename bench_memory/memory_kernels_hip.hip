// HIP build of the bench_memory kernels (gpucal::memory::hip).
#define GPUCAL_GPU_HIP 1
#include "bench_memory/memory_kernels_gpu.cuh"
