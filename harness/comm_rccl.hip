// HIP instance of the shared NCCL/RCCL communicator (RCCL).
#include "harness/comm_nccl.cuh"
