// CUDA instance of the shared NCCL/RCCL communicator.
#include "harness/comm_nccl.cuh"
