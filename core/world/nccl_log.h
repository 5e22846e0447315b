// NCCL's algorithm/protocol choices, read back from its debug log (NCCL_DEBUG=INFO,
// NCCL_DEBUG_SUBSYS=TUNING, NCCL_DEBUG_FILE). Rank 0 of a communicator logs one line per
// collective it schedules, after "NCCL INFO " (any timestamp/host/pid prefix before it):
//   NCCL >= 2.24:  "AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}"
//   NCCL 2.23:     "AllReduce: 4096 Bytes -> Algo 1 proto 0 time 12.5"
//   NCCL 2.20-2.22, RCCL built on them:  "4096 Bytes -> Algo 1 proto 0 time 12.5"
// The numbered forms count the whole buffer for AllGather/ReduceScatter (count·nranks);
// the named form uses NCCL's API count (sendcount, recvcount). Point-to-point operations
// log no such line. A pure parser, a summary per point, NCCL's file-name expansion, and a
// tail reader that returns only the complete lines appended since its last call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucal {

struct NcclTuningRecord {
  std::string func;  // AllReduce, AllGather, ...; empty in the 2.20-2.22 form
  int64_t bytes = 0;
  std::string algo, proto;  // names (RING, LL128); numbered forms are mapped to them
  int channel_lo = -1, channel_hi = -1;  // -1 where the line has no channel range
  bool numbered = false;  // algo/proto were numbers: `bytes` is the whole-buffer count
};

// A record for a TUNING line; nullopt for any other line, or one that does not parse whole.
std::optional<NcclTuningRecord> parse_nccl_tuning_line(std::string_view line);
std::vector<NcclTuningRecord> parse_nccl_tuning_lines(const std::vector<std::string>& lines);

// What one point's collective logs: NCCL's function name and the byte count of each form.
struct NcclTuningExpect {
  std::string func;           // "AllReduce"
  int64_t bytes = 0;          // named form: API count · sizeof(dtype)
  int64_t numbered_bytes = 0; // numbered forms: the same, × nranks for AllGather/ReduceScatter
};

struct NcclTuningSummary {
  std::string algo, proto;  // the most frequent (algo, proto) of the matching records
  std::string choices;      // every pair with its count, most frequent first: "RING/LL128:40,TREE/LL:2"
  int matched = 0;          // records that matched the point
};

// Records of other functions or sizes are ignored; ties go to the pair seen first.
// Nothing matched: every field empty, matched = 0.
NcclTuningSummary summarize_nccl_tuning(const std::vector<NcclTuningRecord>& records, const NcclTuningExpect& expect);

// NCCL_DEBUG_FILE as NCCL expands it: %h = host name up to its first '.', %p = pid, %% = %,
// any other %x is kept as written.
std::string expand_nccl_debug_file(const std::string& pattern, const std::string& host, long pid);
std::string nccl_host_name();  // gethostname() cut at the first '.', "unknown" when it fails
// This process's file: the pattern expanded with nccl_host_name() and getpid().
std::string nccl_debug_file(const std::string& pattern);

// Follows a file that another writer appends to. Each call returns the complete lines added
// since the previous one; a trailing line without '\n' waits for the next call. A missing
// file gives nothing; a file that shrank (rewritten) is read again from its start.
class LogTail {
 public:
  explicit LogTail(std::string path) : path_(std::move(path)) {}
  std::vector<std::string> read_new();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  uint64_t offset_ = 0;
};

}  // namespace gpucal
