// Bench-specific CSV columns (after the common ones of csv_sink.h), one list per bench that
// more than one writer fills: bench_collectives and bench_p2p write them, and so does
// `gpucal import` for nccl-tests/rccl-tests/OSU logs. Documented in results/SCHEMA.md.
#pragma once

#include <string>
#include <vector>

namespace gpucal {

const std::vector<std::string>& collectives_columns();
const std::vector<std::string>& p2p_columns();

}  // namespace gpucal
