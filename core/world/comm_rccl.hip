// HIP instance of the shared NCCL/RCCL communicator (RCCL).
#include "core/world/comm_nccl.cuh"
