// `gpucal import`: nccl-tests / rccl-tests text and JSON output, OSU Micro-Benchmarks output and
// XLA's GPU performance tables read into gpucal's result schema. This header holds what a log says
// (runs, points, hardware lines, what could not be known); import_writer.h turns it into
// collectives.csv / p2p.csv / gemm.csv.
//
// One file may hold several runs (several *_perf binaries, or osu_* benchmarks, concatenated);
// each run has its own rank list and table. A malformed log throws ImportError naming the file
// and line; nothing is written before every log has been read.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpucal::calibration {

class ImportError : public std::runtime_error {
 public:
  ImportError(const std::string& file, int line, const std::string& message)
      : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + message) {}
};

// What the user may tell the importer that a log does not say.
struct ImportOptions {
  std::optional<int> nranks;          // --nranks: ranks of the run (OSU collectives, headless logs)
  std::optional<int> ranks_per_node;  // --ranks-per-node: when the log names no hosts
  std::string device;                 // --device: device name when the log has none
  std::string collective;             // --collective: when neither the log nor its table tells
  std::string format = "auto";        // --format: a row of import_formats() (import_formats.h), or auto
  std::string table_key;              // --table-key: which device's table of an XLA file holding several
  std::string source_ref;             // --source-ref: where the file came from (repository, path, commit)
};

struct RankLine {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string bus_id;
  std::string device_name;  // may be empty (rccl-tests prints none on some systems)
};

// Whether a log's '# Rank N' lines are the whole list (ranks 0 to size-1). A list pasted in part
// (only its last line, '# Rank 71 ...') shows at least highest + 1 ranks, not its line count.
bool rank_list_complete(const std::vector<RankLine>& ranks);

// One measured size of a collective, as the source printed it.
struct CollectivePoint {
  std::string dtype;  // gpucal's name (fp32, bf16, ...) or the source's, lowercased
  std::string op;     // sum, max, ...; "" for collectives that do not reduce
  int64_t root = -1;  // -1: not rooted
  bool in_place = false;
  double size_bytes = 0;         // nccl-tests S (see results/SCHEMA.md, "Imported results")
  int64_t printed_count = 0;     // the count the source printed (per rank where S is a total)
  double time_us = 0;            // the source's mean: nccl-tests' time, OSU's average
  std::optional<double> p50_us;  // a median over iterations (nccl-tests -I, OSU -f)
  std::optional<double> iter_min_us, iter_max_us;  // over iterations (nccl-tests -I)
  std::optional<double> rank_min_us, rank_max_us;  // over ranks (OSU -f)
  std::optional<double> algbw_gbps, busbw_gbps;    // as printed, checked against S/t
  // Half a unit of the last digit each was printed with (import_numbers.h, Printed); 0: exact.
  double time_half_unit = 0, algbw_half_unit = 0, busbw_half_unit = 0;
  std::optional<int64_t> wrong;                    // nullopt: the run did not validate (N/A)
  bool validation_failed = false;                  // OSU -c: its Validation column said Fail
  int64_t iterations = 0;                          // launches averaged into time_us; 0 when unknown
  int cycle = 0;                                   // rccl-tests -N cycle index
  int line = 0;
};

// One size of an OSU point-to-point benchmark, converted to the time of one transfer.
struct P2pPoint {
  double size_bytes = 0;
  double time_us = 0;                     // pingpong: one round trip; bw/bibw: one message (or exchange)
  std::optional<double> p50_us;           // OSU -f: median over iterations, same unit as time_us
  std::optional<bool> validation_passed;  // OSU -c: its Validation column (Pass or Fail)
  std::optional<double> latency_us;       // osu_latency: the one-way latency it printed
  double bandwidth_gbps = 0;              // bytes_counted / time_us
  int64_t iterations = 0;
  int line = 0;
};

// One shape of a GEMM throughput table (XLA's GemmPerfTable): C[b] = A[b] (m x k) x B[b] (k x n).
struct GemmPoint {
  int64_t b = 1, m = 0, n = 0, k = 0;
  std::string dtype, b_dtype, out_dtype;  // gpucal's names (bf16, fp32, fp8_e4m3, ...)
  std::string source_key;                 // as the source names it: "bf16xbf16->bf16"
  double flops_per_s = 0;                 // as the source gives it
  int line = 0;
};

struct ImportedRun {
  std::string source_file;
  std::string source_ref;  // --source-ref: where the file came from, in every row and the sidecar
  int first_line = 0;
  std::string format;                       // nccl-tests, rccl-tests, nccl-tests-json, osu, csv, xla
  std::string impl;                         // nccl-tests, rccl-tests, osu (the CSV's impl column)
  std::string tool_version;                 // "nccl-tests 2.18.3", "rccl-tests develop:5272cd1", "OSU 7.5"
  std::string program;                      // all_reduce_perf, osu_latency, ...
  std::string command_line;                 // as found in the log ("" when it has none)
  std::string backend;                      // cuda, hip, host
  std::vector<std::string> hardware_lines;  // rank lines, NCCL/RCCL/HIP/ROCm version lines, OSU title
  std::vector<RankLine> ranks;
  std::string collective;   // collectives: allreduce, allgather, ...
  std::string collective_from;                // "program name", "command line", "--collective", "table: ..."
  std::vector<std::string> table_candidates;  // the collectives the table alone fits (import_deduce.h)
  std::string p2p_pattern;  // OSU point-to-point: pingpong, sendrecv, bidir
  std::string memory;       // OSU: host or device buffers
  int nranks = 0;
  int nnodes = 0;
  int ranks_per_node = 0;
  std::string nranks_from;   // "rank list", "--nranks", "busbw/algbw", "command line", "osu point-to-point"
  std::string nodes_from;    // "host names", "--ranks-per-node", "command line", "unknown" (nnodes 0)
  std::string device;        // device name, "" when unknown
  bool graph = false;        // nccl-tests -G
  bool validated = true;     // false: -c 0 (every #wrong is N/A)
  std::string rank_combine;  // how the source combined ranks' times
  std::vector<CollectivePoint> collectives;
  std::vector<P2pPoint> p2p;
  std::vector<GemmPoint> gemms;
  std::vector<std::string> unknown;  // what the log does not say
  std::vector<std::string> notes;    // skipped lines, truncated tail, conversions
};

// Reads one log (format detected from its content, or options.format). Throws ImportError.
std::vector<ImportedRun> import_log(const std::string& path, const ImportOptions& options);

// gpucal's dtype name for a source's type name (float -> fp32, MPI_CHAR -> int8, f8e4m3 ->
// fp8_e4m3, ...); unknown names are returned lowercased. Bytes per element, 0 when unknown.
std::string gpucal_dtype(const std::string& source_type);
int dtype_size_bytes_of(const std::string& gpucal_dtype);

}  // namespace gpucal::calibration
