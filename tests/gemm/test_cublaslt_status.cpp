// cuBLASLt heuristic statuses: the library declining a combination is a recorded skip naming
// the status; anything else is an error row (bench_gemm/cublaslt_status.h).
#include <gtest/gtest.h>

#include "bench_gemm/cublaslt_status.h"

using namespace gpucal::gemm;

TEST(CublasLtStatus, DecliningIsASkipAndFailureIsAnError) {
  EXPECT_EQ(cublaslt_heuristic_verdict(CUBLAS_STATUS_SUCCESS, 3), HeuristicVerdict::run);
  EXPECT_EQ(cublaslt_heuristic_verdict(CUBLAS_STATUS_SUCCESS, 0), HeuristicVerdict::skip);
  // int8 NN: cuBLASLt answers INVALID_VALUE; a type the GPU lacks: ARCH_MISMATCH.
  for (cublasStatus_t s : {CUBLAS_STATUS_NOT_SUPPORTED, CUBLAS_STATUS_INVALID_VALUE, CUBLAS_STATUS_ARCH_MISMATCH,
                           CUBLAS_STATUS_ALLOC_FAILED})
    EXPECT_EQ(cublaslt_heuristic_verdict(s, 0), HeuristicVerdict::skip) << cublas_status_name(s);
  for (cublasStatus_t s : {CUBLAS_STATUS_NOT_INITIALIZED, CUBLAS_STATUS_INTERNAL_ERROR, CUBLAS_STATUS_EXECUTION_FAILED,
                           CUBLAS_STATUS_MAPPING_ERROR, CUBLAS_STATUS_LICENSE_ERROR})
    EXPECT_EQ(cublaslt_heuristic_verdict(s, 0), HeuristicVerdict::error) << cublas_status_name(s);
}

TEST(CublasLtStatus, NamesTheStatus) {
  EXPECT_EQ(cublas_status_name(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_EQ(cublas_status_name(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_EQ(cublas_status_name(static_cast<cublasStatus_t>(99)), "cublasStatus 99");
}
