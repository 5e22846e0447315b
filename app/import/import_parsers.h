// What the format readers (import_formats.cpp's rows) share, internal to the importer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/import/import_log.h"
#include "app/import/import_text.h"

namespace gpucal::calibration {

// nccl-tests -J output (import_nccl_json.cpp), JSON file versions 1 to 3.
std::vector<ImportedRun> parse_nccl_tests_json(const std::string& path, const nlohmann::json& doc,
                                               const ImportOptions& options);

// all_reduce_perf[_mpi] -> allreduce, ...; "" for a name that is no nccl-tests binary.
std::string collective_from_program(const std::string& program);

// Rank count, node count, ranks per node and device name of a run from its rank lines, the
// user's options, its launcher's command line or (nccl-tests) its busbw/algbw ratio, in that
// order; records where each came from. Throws ImportError (at `line`) when one stays unknown,
// or when --collective or --device says otherwise than the log.
void resolve_topology(ImportedRun& run, const ImportOptions& options, int line);

// The columns a table had: old nccl-tests versions printed redop and root only where they mean
// something (redop for reducing collectives, root for rooted ones); 2.x prints both always.
struct TableColumns {
  bool redop = true, root = true;
};

// The collectives whose nccl-tests table looks like `points` (import_deduce.cpp says how):
// redop and root, the printed size against count x type size, busbw/algbw against each bus
// factor at `nranks` (0: unknown; then S / (count x type size) gives it where S is a total).
struct Deduction {
  std::vector<std::string> candidates;
  std::string evidence;       // "a reduction in 'redop', no root, size = count x type size, busbw/algbw 1.875 at 16 ranks"
  int nranks_from_sizes = 0;  // n read from S = n x count x type size, where nranks was 0
  bool nranks_known = false;
};
Deduction deduce_collective(const std::vector<CollectivePoint>& points, const TableColumns& columns, int nranks);

// Settles run.collective: the log's own name (a note where the table does not fit it), else
// --collective (refused where the table fits others only), else the table's one candidate
// (recorded in collective_from and the notes). Throws ImportError naming the candidates when
// the table fits several or none, and saying so when the rank count is unknown.
void settle_collective(ImportedRun& run, const TableColumns& columns, const ImportOptions& options, int nranks);

// Whether a row's printed busbw is its printed algbw x `factor`, as intervals of the printed
// digits (import_numbers.h, Printed).
bool busbw_fits(const CollectivePoint& p, double factor);

// A printed algbw must equal size/time and busbw/algbw the collective's bus factor at the
// run's rank count (within the printing's rounding): a mismatch means a corrupted row or a
// wrong rank count. Throws ImportError naming the row's line.
void check_printed_bandwidths(const ImportedRun& run, bool time_is_cputime);

}  // namespace gpucal::calibration
