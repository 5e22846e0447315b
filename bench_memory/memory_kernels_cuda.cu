// CUDA build of the bench_memory kernels (gpucal::memory::cuda).
#include "bench_memory/memory_kernels_gpu.cuh"
