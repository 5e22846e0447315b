// HIP instance of the shared GPU backend.
#include "harness/gpu_backend.cuh"
