#include "app/import/import_text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "app/import/import_log.h"
#include "app/import/import_numbers.h"
#include "core/output/file_io.h"

namespace gpucal::calibration {

namespace {

// "[1,0]<stdout>:" (Open MPI --tag-output), "0: " (srun -l), "2026-02-16T10:00:02.000000000Z "
// (kubectl logs --timestamps). Applied in that order, at most once each.
const std::regex kTagOutput(R"(^\s*\[\d+,(\d+)\]<(stdout|stderr)>:\s?)");
// Open MPI forwards each rank's output in chunks and tags every chunk, so a tag also lands in
// the middle of a line where two ranks' output interleaved ("... -1[1,0]<stdout>:    85.70"):
// removed wherever it stands (only the tag: the spaces around it separate the columns).
const std::regex kTagInside(R"(\[\d+,\d+\]<(stdout|stderr)>:)");
const std::regex kSrunLabel(R"(^\s{0,3}(\d+): )");
const std::regex kTimestamp(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\s)");

}  // namespace

std::vector<LogLine> read_log_lines(const std::string& path) {
  if (const std::string why = not_a_regular_file(path); !why.empty()) throw ImportError(path, 0, why);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(path, 0, "cannot open");
  std::vector<LogLine> lines;
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    if (raw.find('\0') != std::string::npos)
      throw ImportError(path, number, "binary data (NUL byte): not a text log");
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    LogLine line;
    line.number = number;
    std::smatch m;
    if (std::regex_search(raw, m, kTimestamp)) raw = m.suffix();
    if (std::regex_search(raw, m, kTagOutput)) {
      line.tag_rank =
          static_cast<int>(whole_field({path, number, "the rank of the launcher prefix"}, m[1], 0, kMaxRanks - 1));
      line.from_stderr = m[2] == "stderr";
      raw = m.suffix();
    } else if (std::regex_search(raw, m, kSrunLabel) && parse_integer(m[1]).value_or(kMaxRanks) < kMaxRanks) {
      // A larger number before ": " is text of the log, not srun's rank label.
      line.tag_rank = static_cast<int>(*parse_integer(m[1]));
      raw = m.suffix();
    }
    if (raw.find("]<std") != std::string::npos) raw = std::regex_replace(raw, kTagInside, "");
    // Indentation (a log pasted into Markdown or reStructuredText) carries no meaning.
    const auto first = raw.find_first_not_of(" \t");
    line.text = first == std::string::npos ? "" : raw.substr(first);
    lines.push_back(std::move(line));
  }
  if (in.bad()) throw ImportError(path, number, "read error");
  return lines;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_whitespace(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string token;
  while (in >> token) out.push_back(token);
  return out;
}

std::vector<std::string> split_columns(const std::string& s) {
  std::vector<std::string> out;
  std::string current;
  int spaces = 0;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      spaces += c == '\t' ? 2 : 1;
      continue;
    }
    if (spaces >= 2 && !current.empty()) {
      out.push_back(current);
      current.clear();
    } else if (spaces == 1 && !current.empty()) {
      current += ' ';
    }
    spaces = 0;
    current += c;
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

std::optional<double> parse_number(const std::string& token) {
  if (token.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size() || errno == ERANGE) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_integer(const std::string& token) {
  if (token.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(token.c_str(), &end, 10);
  if (end != token.c_str() + token.size() || errno == ERANGE) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::string find_command_line(const std::vector<LogLine>& lines, std::size_t begin, std::size_t end,
                              const std::regex& program) {
  static const std::regex kLauncher(R"((^|[\s/])(mpirun|mpiexec|srun|aprun|jsrun|flux)\s)");
  for (std::size_t i = end; i-- > begin;) {
    const std::string& text = lines[i].text;
    if (text.rfind("#", 0) == 0 || !std::regex_search(text, program)) continue;
    // Join the continuation lines above ("cmd \" / "  -x FOO \").
    std::size_t first = i;
    while (first > begin) {
      std::string above = trim(lines[first - 1].text);
      if (above.empty() || above.back() != '\\') break;
      --first;
    }
    std::string joined;
    for (std::size_t k = first; k <= i; ++k) {
      std::string part = trim(lines[k].text);
      if (part.rfind("> ", 0) == 0 || part == ">") part = trim(part.substr(1));  // a Markdown quote
      if (!part.empty() && part.back() == '\\') part.pop_back();
      joined += (joined.empty() ? "" : " ") + trim(part);
    }
    // Drop a shell prompt: start at the launcher, else at the program's own token.
    std::smatch m;
    if (std::regex_search(joined, m, kLauncher)) return joined.substr(m.position(2));
    if (std::regex_search(joined, m, program)) {
      const std::size_t token_start = joined.rfind(' ', m.position(0));
      return token_start == std::string::npos ? joined : joined.substr(token_start + 1);
    }
    return joined;
  }
  return "";
}

namespace {

// A count no launcher takes (0, 99999999999) is no count: the rank count stays unknown.
std::optional<int> launcher_count(const std::optional<std::string>& v) {
  if (!v) return std::nullopt;
  const auto n = parse_integer(*v);
  if (!n || *n < 1 || *n > kMaxRanks) return std::nullopt;
  return static_cast<int>(*n);
}

// mpirun's -H h1:8,h2:8: 2 nodes, 8 per node (a per-node count only when every host has one).
void count_hosts(const std::string& hosts, LauncherCounts& c) {
  std::stringstream in(hosts);
  std::string item;
  int nodes = 0, largest = 0;
  bool all_counted = true;
  while (std::getline(in, item, ',')) {
    ++nodes;
    const auto colon = item.rfind(':');
    const auto slots = colon == std::string::npos ? std::nullopt : launcher_count(item.substr(colon + 1));
    if (slots)
      largest = std::max<int>(largest, static_cast<int>(*slots));
    else
      all_counted = false;
  }
  if (nodes > 0) c.nnodes = nodes;
  if (all_counted && largest > 0) c.ranks_per_node = largest;
}

}  // namespace

LauncherCounts parse_launcher(const std::string& command_line) {
  LauncherCounts c;
  const std::vector<std::string> t = split_whitespace(command_line);
  if (t.empty()) return c;
  const std::string launcher = t[0].substr(t[0].rfind('/') == std::string::npos ? 0 : t[0].rfind('/') + 1);
  const bool slurm = launcher == "srun";
  auto value_of = [&](std::size_t i, const std::string& flag) -> std::optional<std::string> {
    const std::string& a = t[i];
    if (a == flag && i + 1 < t.size()) return t[i + 1];
    if (a.rfind(flag + "=", 0) == 0) return a.substr(flag.size() + 1);
    // Attached short options: -N2, -n16 (not -np8: "-np" is a long option of mpirun).
    if (flag.size() == 2 && a.size() > 2 && a.rfind(flag, 0) == 0 &&
        std::isdigit(static_cast<unsigned char>(a[2])))
      return a.substr(2);
    return std::nullopt;
  };
  // An nccl-tests program started with no launcher is one process: -t threads x -g GPUs ranks, on
  // one node (the defaults are 1 and 1).
  static const std::regex kPerfProgram(R"(_perf(_mpi)?$)");
  if (std::regex_search(launcher, kPerfProgram)) {
    int64_t threads = 1, gpus = 1;
    for (std::size_t i = 1; i < t.size(); ++i) {
      for (const char* f : {"-t", "--nthreads"})
        if (auto v = launcher_count(value_of(i, f))) threads = *v;
      for (const char* f : {"-g", "--ngpus"})
        if (auto v = launcher_count(value_of(i, f))) gpus = *v;
    }
    if (threads * gpus <= kMaxRanks) {
      c.nranks = c.ranks_per_node = static_cast<int>(threads * gpus);
      c.nnodes = 1;
    }
    return c;
  }
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (slurm) {
      for (const char* f : {"-n", "--ntasks"})
        if (auto v = launcher_count(value_of(i, f))) c.nranks = v;
      for (const char* f : {"-N", "--nodes"})
        if (auto v = launcher_count(value_of(i, f))) c.nnodes = v;
      if (auto v = launcher_count(value_of(i, "--ntasks-per-node"))) c.ranks_per_node = v;
    } else {
      for (const char* f : {"-np", "-n", "--np", "-c"})
        if (auto v = launcher_count(value_of(i, f))) c.nranks = v;
      for (const char* f : {"-N", "--npernode", "-npernode"})
        if (auto v = launcher_count(value_of(i, f))) c.ranks_per_node = v;
      if (auto hosts = value_of(i, "-H"); hosts || (hosts = value_of(i, "--host"))) count_hosts(*hosts, c);
      if (auto map = value_of(i, "--map-by")) {
        static const std::regex kPpr(R"(ppr:(\d+):node)");
        std::smatch m;
        if (std::regex_search(*map, m, kPpr)) c.ranks_per_node = launcher_count(m[1].str());
      }
    }
  }
  if (!c.nranks && c.nnodes && c.ranks_per_node && int64_t{*c.nnodes} * *c.ranks_per_node <= kMaxRanks)
    c.nranks = *c.nnodes * *c.ranks_per_node;
  if (!c.nnodes && c.nranks && c.ranks_per_node)
    c.nnodes = (*c.nranks + *c.ranks_per_node - 1) / *c.ranks_per_node;
  if (!c.ranks_per_node && c.nranks && c.nnodes) c.ranks_per_node = (*c.nranks + *c.nnodes - 1) / *c.nnodes;
  return c;
}

}  // namespace gpucal::calibration
