// CUDA instance of the shared GPU backend.
#include "core/backend/gpu_backend.cuh"
