// Line-level helpers of the log importers: reading a log with the prefixes launchers add
// (mpirun --tag-output "[1,0]<stdout>:" at a line's start or inside it, srun -l "0: ", kubectl
// --timestamps) removed, strict number parsing, and the command line of a run with the
// rank/node counts its launcher names.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace gpucal::calibration {

struct LogLine {
  int number = 0;     // 1-based line in the file
  std::string text;   // without the launcher prefix and the line end
  int tag_rank = -1;  // the rank of an mpirun --tag-output / srun -l prefix, -1 when none
  bool from_stderr = false;
};

// Throws ImportError when the file cannot be read or holds a NUL byte (not a text log).
std::vector<LogLine> read_log_lines(const std::string& path);

std::string trim(const std::string& s);
std::vector<std::string> split_whitespace(const std::string& s);
// Splits at runs of two or more spaces (OSU's column headers: "Avg Latency(us)  Min Latency(us)").
std::vector<std::string> split_columns(const std::string& s);
// The whole token must be a number: "12.5", "1.2e+05", "7"; nullopt otherwise.
std::optional<double> parse_number(const std::string& token);
std::optional<int64_t> parse_integer(const std::string& token);

// The command that started a run: the last line in [begin, end) matching `program` (e.g. a
// token ending in "_perf"), with backslash continuations above it joined and shell prompts
// ("$ ", "> ", "[user@host dir]# ") removed. "" when there is none.
std::string find_command_line(const std::vector<LogLine>& lines, std::size_t begin, std::size_t end,
                              const std::regex& program);

// Rank and node counts a launcher command names: mpirun/mpiexec -np/-n/--np N, -H h1:k,h2:k,
// Open MPI's -N / --npernode / --map-by ppr:k:node; srun -n/--ntasks N, -N/--nodes N,
// --ntasks-per-node k. Each is nullopt when the command does not say.
struct LauncherCounts {
  std::optional<int> nranks, nnodes, ranks_per_node;
};
LauncherCounts parse_launcher(const std::string& command_line);

}  // namespace gpucal::calibration
