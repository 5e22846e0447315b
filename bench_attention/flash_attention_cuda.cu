// CUDA build of the portable flash attention kernels (gpucal::attention::cuda).
#include "bench_attention/flash_kernels.cuh"
