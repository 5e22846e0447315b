// OSU Micro-Benchmarks output (c/util/osu_util.c): a title, a datatype line (7.x), a column
// header, then one row per size:
//   # OSU MPI[-CUDA|-ROCm] Latency Test v7.5        osu_latency   -> p2p pingpong
//   # OSU MPI Bandwidth Test v7.5                    osu_bw        -> p2p sendrecv (uni)
//   # OSU MPI Bi-Directional Bandwidth Test v7.5     osu_bibw      -> p2p bidir
//   # OSU MPI Allreduce Latency Test v7.5            osu_allreduce -> collectives (and allgather,
//     reduce_scatter, alltoall ("All-to-All Personalized Exchange"), bcast ("Broadcast"), reduce)
//   # Datatype: MPI_CHAR.
//   # Size       Avg Latency(us)   [Min Latency(us)  Max Latency(us)  Iterations]   (-f)
//   # Size      Bandwidth (MB/s)
//   7.4 pt2pt prints "Latency (us)", 7.5 "Avg Latency(us)"; -c adds a Validation column (Pass or
//   Fail), tail-latency runs "P50 Tail Lat(us)" columns; "# Send Buffer on DEVICE (D) and Receive
//   Buffer on DEVICE (D)" says where the buffers were.
// Sizes: OSU's Size is the message per rank; nccl-tests' S is the total for allgather and
// alltoall (Size x ranks) and Size for the others. Times: OSU prints the average over
// iterations (and, for collectives, over ranks; -f adds the minimum and maximum over ranks).
#include <algorithm>
#include <regex>

#include "app/import/import_numbers.h"
#include "app/import/import_parsers.h"
#include "core/formulas/collectives.h"

namespace gpucal::calibration {

namespace {

const std::regex kTitle(R"(^#\s*OSU\s+\S+?(-(CUDA|ROCm|OpenACC|SYCL))?\s+(.*?)\s+Test(\s+v(\S+))?\s*$)");
const std::regex kDatatype(R"(^#\s*Datatype:\s*(\S+))");
const std::regex kOsuProgram(R"((^|[\s/])osu_[a-z_]+(\s|$))");

struct Kind {
  std::string collective, pattern;  // one of the two is set
};

Kind kind_of(const std::string& path, int line, const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), ::tolower);
  if (n.find("non-blocking") != std::string::npos || n.find("multi") != std::string::npos ||
      n.find("persistent") != std::string::npos || n.find("alltoallv") != std::string::npos ||
      n.find("allgatherv") != std::string::npos || n.find("one sided") != std::string::npos)
    throw ImportError(path, line,
                      "OSU '" + name +
                          "' test is not imported (only blocking latency, bw, bibw and "
                          "allreduce, allgather, reduce_scatter, alltoall, bcast, reduce)");
  if (n == "latency") return {"", "pingpong"};
  if (n == "bandwidth") return {"", "sendrecv"};
  if (n == "bi-directional bandwidth") return {"", "bidir"};
  for (const auto& c : collectives())  // registry order: allreduce before reduce, reduce_scatter too
    for (const auto word : c.osu_words)
      if (n.find(word) != std::string::npos) return {std::string(c.name), ""};
  throw ImportError(path, line, "unknown OSU test '" + name + "'");
}

struct Columns {
  int avg = -1, min = -1, max = -1, iterations = -1, bandwidth = -1, p50 = -1, validation = -1, count = 0;
  std::vector<std::string> names;
};

Columns parse_header(const std::string& path, const LogLine& line) {
  const auto names = split_columns(line.text.substr(1));
  Columns c;
  c.count = static_cast<int>(names.size());
  c.names = names;
  for (int i = 0; i < c.count; ++i) {
    const std::string& n = names[i];
    if (i == 0 && n != "Size")
      throw ImportError(path, line.number, "OSU column header must start with 'Size'");
    if (n.find("Avg Latency") != std::string::npos || n == "Latency (us)" || n == "Latency(us)")
      c.avg = i;
    else if (n.find("Min Latency") != std::string::npos)
      c.min = i;
    else if (n.find("Max Latency") != std::string::npos)
      c.max = i;
    else if (n == "Iterations")
      c.iterations = i;
    else if (n.find("Bandwidth") != std::string::npos)
      c.bandwidth = i;
    else if (n.find("P50") != std::string::npos)
      c.p50 = i;
    else if (n == "Validation")
      c.validation = i;
  }
  if (c.avg < 0 && c.bandwidth < 0)
    throw ImportError(path, line.number, "OSU column header has no latency or bandwidth column");
  return c;
}

// A run's facts from its title (`m`) and the command line above it.
ImportedRun start_run(const std::string& path, const std::vector<LogLine>& lines, std::size_t title,
                      std::size_t previous_end, const std::smatch& m, const Kind& kind) {
  ImportedRun run;
  run.source_file = path;
  run.first_line = lines[title].number;
  run.format = run.impl = "osu";
  run.tool_version = m[5].matched ? "OSU " + m[5].str() : "OSU (version not printed)";
  run.hardware_lines.push_back(trim(lines[title].text));
  run.collective = kind.collective;
  run.p2p_pattern = kind.pattern;
  run.command_line = find_command_line(lines, previous_end, title, kOsuProgram);
  for (const auto& t : split_whitespace(run.command_line))
    if (t.find("osu_") != std::string::npos)
      run.program = t.substr(t.rfind('/') == std::string::npos ? 0 : t.rfind('/') + 1);
  const std::string accel = m[2];
  // OSU's buffer arguments: "D D" (both on the device), "H D", ... or "-d cuda|rocm".
  bool device_args = run.command_line.find("-d cuda") != std::string::npos ||
                     run.command_line.find("-d rocm") != std::string::npos;
  for (const auto& a : split_whitespace(run.command_line)) device_args = device_args || a == "D";
  run.memory = !accel.empty() || device_args ? "device" : "host";
  run.backend = accel == "ROCm" || run.command_line.find("-d rocm") != std::string::npos ? "hip"
                : run.memory == "device"                                                 ? "cuda"
                                                                                         : "host";
  run.rank_combine =
      kind.pattern.empty() ? "average over ranks of each rank's average (OSU)" : "rank 0's average";
  return run;
}

// One data row (its tokens `t`, as many as the header's columns) into the run.
void read_row(const std::string& path, const LogLine& l, const std::vector<std::string>& t, const Columns& c,
              const Kind& kind, const std::string& dtype, ImportedRun& run) {
  const double size = static_cast<double>(size_field({path, l.number, "column 'Size'"}, t[0]));
  auto value = [&](int col, bool is_time) -> std::optional<double> {
    if (col < 0) return std::nullopt;
    const FieldAt at{path, l.number, "column '" + c.names[col] + "'"};
    if (!parse_number(t[col]) || !(*parse_number(t[col]) >= 0))
      throw ImportError(path, l.number, at.field + ": '" + t[col] + "' is not a non-negative number");
    return is_time ? time_field(at, t[col], true) : rate_field(at, t[col]);
  };
  const auto avg = value(c.avg, true);
  const auto bw = value(c.bandwidth, false);
  const auto iterations =
      c.iterations < 0 ? 0 : whole_field({path, l.number, "column 'Iterations'"}, t[c.iterations], 1, kMaxIterations);
  std::optional<bool> passed;
  if (c.validation >= 0) {
    if (t[c.validation] != "Pass" && t[c.validation] != "Fail")
      throw ImportError(path, l.number, "Validation must be Pass or Fail, got '" + t[c.validation] + "'");
    passed = t[c.validation] == "Pass";
  }
  if (!kind.pattern.empty()) {
    P2pPoint p;
    p.size_bytes = size;
    p.line = l.number;
    p.iterations = iterations;
    if (kind.pattern == "pingpong") {
      if (!avg || !(*avg > 0)) throw ImportError(path, l.number, "latency must be > 0");
      p.latency_us = *avg;
      p.time_us = 2.0 * *avg;  // one round trip
      p.bandwidth_gbps = size / *avg / 1e3;
      if (auto p50 = value(c.p50, true)) p.p50_us = 2.0 * *p50;
    } else {
      if (!bw || !(*bw > 0)) throw ImportError(path, l.number, "bandwidth must be > 0");
      const double bytes = kind.pattern == "bidir" ? 2.0 * size : size;
      p.bandwidth_gbps = *bw / 1e3;  // OSU MB/s are 1e6 B/s
      p.time_us = bytes / *bw;       // bytes / (1e6 B/s) = microseconds
    }
    p.validation_passed = passed;
    run.p2p.push_back(p);
    return;
  }
  if (!avg || !(*avg > 0)) throw ImportError(path, l.number, "latency must be > 0");
  CollectivePoint p;
  p.dtype = dtype;
  p.op = kind.collective == "allreduce" || kind.collective == "reduce" || kind.collective == "reduce_scatter"
             ? "sum"
             : "";
  p.root = kind.collective == "broadcast" || kind.collective == "reduce" ? 0 : -1;
  p.size_bytes = size;  // scaled by ranks in finish_run where nccl-tests' S is a total
  p.printed_count = static_cast<int64_t>(size);
  p.time_us = *avg;
  p.rank_min_us = value(c.min, true);
  p.rank_max_us = value(c.max, true);
  p.p50_us = value(c.p50, true);
  p.iterations = iterations;
  p.line = l.number;
  if (passed) p.wrong = *passed ? 0 : 1;  // OSU says only whether any element was wrong
  p.validation_failed = passed && !*passed;
  run.collectives.push_back(p);
}

bool is_last_content_line(const std::vector<LogLine>& lines, std::size_t k) {
  for (std::size_t j = k + 1; j < lines.size(); ++j)
    if (!trim(lines[j].text).empty()) return false;
  return true;
}

// The lines after a title, up to the next title: buffer and datatype lines, the column header,
// the rows. Returns the index of the line that ends the table; `rows_end` is past its last row.
std::size_t read_table(const std::string& path, const std::vector<LogLine>& lines, std::size_t title,
                       const Kind& kind, ImportedRun& run, std::string& dtype, std::size_t& rows_end) {
  std::optional<Columns> columns;
  std::size_t k = title + 1;
  for (; k < lines.size(); ++k) {
    const LogLine& l = lines[k];
    if (std::regex_search(l.text, kTitle)) break;
    std::smatch d;
    if (l.text.find("Buffer on DEVICE") != std::string::npos || l.text.find("Buffer on MANAGED") != std::string::npos) {
      run.memory = "device";
      run.backend = run.backend == "host" ? "cuda" : run.backend;
      run.hardware_lines.push_back(trim(l.text));
    } else if (std::regex_search(l.text, d, kDatatype)) {
      dtype = gpucal_dtype(d[1]);
      run.hardware_lines.push_back(trim(l.text));
    }
    const auto t = split_whitespace(l.text);
    if (!t.empty() && t[0] == "#" && t.size() > 1 && t[1] == "Size") columns = parse_header(path, l);
    if (t.empty() || !columns || !is_integer_token(t[0])) continue;
    if (static_cast<int>(t.size()) != columns->count) {
      if (static_cast<int>(t.size()) < columns->count && is_last_content_line(lines, k)) {
        run.notes.push_back("line " + std::to_string(l.number) + ": the log ends mid-row; that row is dropped");
        continue;
      }
      throw ImportError(path, l.number,
                        "row has " + std::to_string(t.size()) + " fields, the header " + std::to_string(columns->count));
    }
    if (parse_integer(t[0]) == 0) {
      run.notes.push_back("line " + std::to_string(l.number) + ": a zero-byte row skipped");
      continue;
    }
    read_row(path, l, t, *columns, kind, dtype, run);
    rows_end = k + 1;
  }
  if (!columns) throw ImportError(path, run.first_line, "OSU title without a '# Size' column header");
  if (run.collectives.empty() && run.p2p.empty()) throw ImportError(path, run.first_line, "OSU test without rows");
  return k;
}

// Rank and node counts, and sizes in nccl-tests' convention once the rank count is known.
void finish_run(ImportedRun& run, const Kind& kind, const std::string& dtype, const ImportOptions& options) {
  if (dtype.empty()) run.unknown.push_back("datatype (no '# Datatype:' line; OSU before 7.0)");
  if (!kind.pattern.empty()) {
    run.nranks = 2;
    run.nranks_from = "osu point-to-point";
  }
  resolve_topology(run, options, run.first_line);
  if (!kind.collective.empty()) {
    // OSU's Size is per rank for allgather and alltoall; its reduce_scatter Size is already the
    // total it splits (nccl-tests' S), like allreduce's, bcast's and reduce's.
    const bool per_rank_size = kind.collective == "allgather" || kind.collective == "alltoall";
    const int esize = std::max(1, dtype_size_bytes_of(dtype));
    for (auto& p : run.collectives) {
      p.printed_count = static_cast<int64_t>(p.size_bytes) / esize;
      if (per_rank_size) p.size_bytes *= run.nranks;
      if (p.size_bytes > static_cast<double>(kMaxSizeBytes))
        throw ImportError(run.source_file, p.line,
                          "column 'Size' x " + std::to_string(run.nranks) + " ranks is above 2^50 bytes");
    }
    if (per_rank_size)
      run.notes.push_back("size_bytes = OSU Size x " + std::to_string(run.nranks) + " ranks (nccl-tests' total S)");
  }
}

}  // namespace

bool detects_osu(const std::string& line) {
  static const std::regex kOsu(R"(^#\s*OSU\s)");
  return std::regex_search(line, kOsu);
}

std::vector<ImportedRun> parse_osu(const std::string& path, const std::vector<LogLine>& lines,
                                   const ImportOptions& options) {
  std::vector<ImportedRun> runs;
  std::size_t previous_end = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_search(lines[i].text, m, kTitle)) continue;
    const Kind kind = kind_of(path, lines[i].number, m[3]);
    ImportedRun run = start_run(path, lines, i, previous_end, m, kind);
    std::string dtype;
    std::size_t rows_end = i + 1;  // past the last row (the next command line may follow)
    const std::size_t end = read_table(path, lines, i, kind, run, dtype, rows_end);
    finish_run(run, kind, dtype, options);
    runs.push_back(std::move(run));
    previous_end = rows_end;
    i = end - 1;
  }
  if (runs.empty()) throw ImportError(path, lines.empty() ? 1 : lines.front().number, "no '# OSU ... Test' title");
  return runs;
}

}  // namespace gpucal::calibration
