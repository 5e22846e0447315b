// HIP instance of the shared p2p device operations.
#include "bench_p2p/device_ops_gpu.cuh"
