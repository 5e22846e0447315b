#include "bench_gemm/cublaslt_status.h"

namespace gpucal::gemm {

HeuristicVerdict cublaslt_heuristic_verdict(cublasStatus_t status, int candidates_found) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return candidates_found > 0 ? HeuristicVerdict::run : HeuristicVerdict::skip;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_INVALID_VALUE:
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_ALLOC_FAILED: return HeuristicVerdict::skip;
    default: return HeuristicVerdict::error;
  }
}

std::string cublas_status_name(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "cublasStatus " + std::to_string(static_cast<int>(status));
}

}  // namespace gpucal::gemm
