// Bench-specific CSV columns (after the common ones of csv_sink.h), one list per bench that
// more than one writer fills: bench_collectives, bench_p2p and bench_gemm write them, and so does
// `gpucal import` (nccl-tests, rccl-tests and OSU logs; XLA's performance tables). Documented in
// results/SCHEMA.md.
#pragma once

#include <string>
#include <vector>

namespace gpucal {

const std::vector<std::string>& collectives_columns();
const std::vector<std::string>& p2p_columns();
const std::vector<std::string>& gemm_columns();

}  // namespace gpucal
