// What cublasLtMatmulAlgoGetHeuristic's answer means for a point. The library declining the
// combination is a recorded skip that names the status: NOT_SUPPORTED; INVALID_VALUE, its
// answer for layouts it does not offer (int8 NN, say); ARCH_MISMATCH (a type this GPU
// lacks); ALLOC_FAILED (out of memory, like any allocation); or SUCCESS with no candidate.
// Any other status (uninitialized handle, internal or execution error) is an error row.
#pragma once

#include <cublasLt.h>

#include <string>

namespace gpucal::gemm {

enum class HeuristicVerdict { run, skip, error };

HeuristicVerdict cublaslt_heuristic_verdict(cublasStatus_t status, int candidates_found);
// "CUBLAS_STATUS_NOT_SUPPORTED"; the number for a status this header does not name.
std::string cublas_status_name(cublasStatus_t status);

}  // namespace gpucal::gemm
