// HIP build of the reference check kernel (source: gemm_reference.cuh).
#include "bench_gemm/gemm_reference.cuh"
