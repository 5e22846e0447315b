// CUDA instance of the shared NCCL/RCCL communicator.
#include "core/world/comm_nccl.cuh"
