// The format readers behind import_log() (internal to the importer; each is one file).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/import/import_log.h"
#include "app/import/import_text.h"

namespace gpucal::calibration {

// nccl-tests / rccl-tests text output (import_nccl_tests.cpp).
std::vector<ImportedRun> parse_nccl_tests_text(const std::string& path, const std::vector<LogLine>& lines,
                                               const ImportOptions& options);
// nccl-tests -J output (import_nccl_json.cpp), JSON file versions 1 to 3.
std::vector<ImportedRun> parse_nccl_tests_json(const std::string& path, const nlohmann::json& doc,
                                               const ImportOptions& options);
// OSU Micro-Benchmarks (import_osu.cpp).
std::vector<ImportedRun> parse_osu(const std::string& path, const std::vector<LogLine>& lines,
                                   const ImportOptions& options);

// all_reduce_perf[_mpi] -> allreduce, ...; "" for a name that is no nccl-tests binary.
std::string collective_from_program(const std::string& program);

// Rank count, node count, ranks per node and device name of a run from its rank lines, the
// user's options, its launcher's command line or (nccl-tests) its busbw/algbw ratio, in that
// order; records where each came from. Throws ImportError (at `line`) when one stays unknown,
// or when --collective or --device says otherwise than the log.
void resolve_topology(ImportedRun& run, const ImportOptions& options, int line);

// A printed algbw must equal size/time and busbw/algbw the collective's bus factor at the
// run's rank count (within the printing's rounding): a mismatch means a corrupted row or a
// wrong rank count. Throws ImportError naming the row's line.
void check_printed_bandwidths(const ImportedRun& run, bool time_is_cputime);

}  // namespace gpucal::calibration
