// import_log(): a log's format found with the rules of the import_formats.cpp table and read by
// its reader; dtype names, rank/node resolution and the printed-bandwidth check the readers share.
#include "app/import/import_log.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/formulas/collective_formulas.h"
#include "app/common/calibration_schema.h"
#include "app/import/import_formats.h"
#include "app/import/import_numbers.h"
#include "app/import/import_parsers.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool has_content(const LogLine& l) { return !l.text.empty() && l.text[0] != '#'; }

// The first row of `scope` whose rule accepts `text`, or nullptr.
const ImportFormat* format_of(const std::string& text, FormatScope scope) {
  for (const auto& f : import_formats())
    if (f.scope == scope && f.detects(text)) return &f;
  return nullptr;
}

struct Section {
  const ImportFormat* format;
  std::vector<LogLine> lines;
};

// A log may hold tables of several tools one after another (an OSU run, then nccl-tests): each
// is read by its own reader. A section starts at a table of another format than the one before,
// with the lines above it that belong to it (its command line, blank lines), back to the
// previous table's last row or comment line.
std::vector<Section> split_by_format(const std::vector<LogLine>& lines) {
  std::vector<Section> sections;
  std::size_t begin = 0;
  const ImportFormat* current = nullptr;
  auto belongs_above = [&](std::size_t k) {
    const auto t = split_whitespace(lines[k].text);
    return t.empty() || (t[0][0] != '#' && !is_integer_token(t[0]));
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const ImportFormat* f = format_of(lines[i].text, FormatScope::table);
    if (!f || f == current) continue;
    if (current) {
      std::size_t cut = i;
      while (cut > begin && belongs_above(cut - 1)) --cut;
      sections.push_back({current, {lines.begin() + begin, lines.begin() + cut}});
      begin = cut;
    }
    current = f;
  }
  if (current) sections.push_back({current, {lines.begin() + begin, lines.end()}});
  return sections;
}

std::string format_list() {
  std::string out;
  for (const auto& f : import_formats()) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

// The runs of one file, by --format or by the formats' rules.
std::vector<ImportedRun> read_runs(const std::string& path, const ImportOptions& options) {
  const std::vector<LogLine> lines = read_log_lines(path);
  if (lines.empty()) throw ImportError(path, 0, "empty file");
  if (options.format != "auto") {
    if (const std::string why = check_import_format(options.format); !why.empty()) throw ImportError(path, 0, why);
    return registry::find(import_formats(), options.format)->parse(path, lines, options);
  }
  const auto first = std::find_if(lines.begin(), lines.end(), has_content);
  if (first != lines.end())
    if (const ImportFormat* f = format_of(first->text, FormatScope::whole_file)) return f->parse(path, lines, options);
  std::vector<ImportedRun> runs;
  for (const Section& section : split_by_format(lines))
    for (auto& run : section.format->parse(path, section.lines, options)) runs.push_back(std::move(run));
  if (!runs.empty()) return runs;
  throw ImportError(path, 1,
                    "unknown log format: no rule of " + format_list() +
                        " recognizes it (gpucal import --help says what each looks for); pass --format NAME");
}

// A file's own '# source: ...' line in its leading comment block (with the '#   ' lines that
// continue it), the way a collected log or table names where it came from; "" when none.
std::string source_from_header(const std::string& path) {
  std::string source;
  bool in_source = false;
  for (const LogLine& line : read_log_lines(path)) {
    const std::string& t = line.text;
    if (t.rfind("#", 0) != 0) break;  // the leading comment block ends
    if (t.rfind("# source:", 0) == 0) {
      source = trim(t.substr(9));
      in_source = true;
    } else if (in_source && t.rfind("#   ", 0) == 0) {
      source += " " + trim(t.substr(1));
    } else {
      in_source = false;
    }
  }
  return source;
}

}  // namespace

std::vector<ImportedRun> import_log(const std::string& path, const ImportOptions& options) {
  std::vector<ImportedRun> runs = read_runs(path, options);
  const std::string source = options.source_ref.empty() ? source_from_header(path) : options.source_ref;
  for (auto& run : runs) run.source_ref = source;
  return runs;
}

std::string gpucal_dtype(const std::string& source_type) {
  static const std::map<std::string, std::string> names = {{"float", "fp32"},
                                                           {"half", "fp16"},
                                                           {"bfloat16", "bf16"},
                                                           {"double", "fp64"},
                                                           {"int32", "int32"},
                                                           {"int", "int32"},
                                                           {"int8", "int8"},
                                                           {"char", "int8"},
                                                           {"uint8", "uint8"},
                                                           {"uint32", "uint32"},
                                                           {"int64", "int64"},
                                                           {"uint64", "uint64"},
                                                           {"f8e4m3", "fp8_e4m3"},
                                                           {"f8e5m2", "fp8_e5m2"},
                                                           {"fp8_e4m3", "fp8_e4m3"},
                                                           {"fp8_e5m2", "fp8_e5m2"},
                                                           {"mpi_char", "int8"},
                                                           {"mpi_signed_char", "int8"},
                                                           {"mpi_unsigned_char", "uint8"},
                                                           {"mpi_byte", "uint8"},
                                                           {"mpi_int", "int32"},
                                                           {"mpi_float", "fp32"},
                                                           {"mpi_double", "fp64"},
                                                           {"mpi_long", "int64"},
                                                           {"fp32", "fp32"},
                                                           {"fp16", "fp16"},
                                                           {"bf16", "bf16"},
                                                           {"fp64", "fp64"}};
  std::string key = lower(trim(source_type));
  while (!key.empty() && key.back() == '.') key.pop_back();
  const auto it = names.find(key);
  return it == names.end() ? key : it->second;
}

int dtype_size_bytes_of(const std::string& dtype) {
  static const std::map<std::string, int> sizes = {
      {"fp64", 8}, {"int64", 8}, {"uint64", 8}, {"fp32", 4},  {"int32", 4},    {"uint32", 4},
      {"fp16", 2}, {"bf16", 2},  {"int8", 1},   {"uint8", 1}, {"fp8_e4m3", 1}, {"fp8_e5m2", 1}};
  const auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

bool rank_list_complete(const std::vector<RankLine>& ranks) {
  if (ranks.empty()) return false;
  int highest = 0;
  for (const auto& r : ranks) highest = std::max(highest, r.rank);
  return highest + 1 == static_cast<int>(ranks.size());
}

namespace {

void resolve_ranks(ImportedRun& run, const ImportOptions& options, const LauncherCounts& launcher, int line) {
  const std::string& file = run.source_file;
  int at_least = 0;  // a rank list pasted in part: its highest rank + 1
  if (!run.ranks.empty()) {
    std::set<int> ids;
    for (const auto& r : run.ranks) ids.insert(r.rank);
    if (ids.size() != run.ranks.size())
      throw ImportError(file, line,
                        "the '# Using devices' list names a rank twice (two runs' headers interleaved?)");
    if (!rank_list_complete(run.ranks)) at_least = *ids.rbegin() + 1;
  }
  if (!run.ranks.empty() && at_least == 0) {
    run.nranks = static_cast<int>(run.ranks.size());
    run.nranks_from = "rank list";
    if (options.nranks && *options.nranks != run.nranks)
      run.notes.push_back("--nranks " + std::to_string(*options.nranks) + " ignored: the log lists " +
                          std::to_string(run.nranks) + " ranks");
  } else if (run.nranks > 0) {
    // the reader set it (OSU point-to-point: always 2)
  } else if (options.nranks) {
    run.nranks = *options.nranks;
    run.nranks_from = "--nranks";
  } else if (launcher.nranks) {
    run.nranks = *launcher.nranks;
    run.nranks_from = "command line";
  } else if (!run.collective.empty()) {
    std::vector<int> inferred;
    for (const auto& p : run.collectives)
      if (p.algbw_gbps && p.busbw_gbps && *p.algbw_gbps >= 0.5)
        if (auto n = nranks_from_bus_ratio(run.collective, *p.busbw_gbps / *p.algbw_gbps)) inferred.push_back(*n);
    if (!inferred.empty()) {
      std::nth_element(inferred.begin(), inferred.begin() + inferred.size() / 2, inferred.end());
      run.nranks = inferred[inferred.size() / 2];
      run.nranks_from = "busbw/algbw";
      run.unknown.push_back("rank list (no '# Using devices' lines): " + std::to_string(run.nranks) +
                            " ranks inferred from busbw/algbw");
    }
  }
  if (run.nranks < 1)
    throw ImportError(file, line,
                      at_least > 0 ? "the rank count is unknown: the '# Using devices' list is shown in part (its "
                                     "ranks stop at " + std::to_string(at_least - 1) + ", so at least " +
                                     std::to_string(at_least) + " ranks); pass --nranks N"
                                   : "the rank count is unknown (no rank list, no launcher command line); pass --nranks N");
  if (at_least > 0) {
    if (run.nranks < at_least)
      throw ImportError(file, line,
                        "the log lists rank " + std::to_string(at_least - 1) + " but its rank count (" +
                            run.nranks_from + ") is " + std::to_string(run.nranks));
    run.unknown.push_back("rank list shown in part (ranks up to " + std::to_string(at_least - 1) +
                          "): the rank count is not its line count");
  }
}

void resolve_nodes(ImportedRun& run, const ImportOptions& options, const LauncherCounts& launcher, int line) {
  std::map<std::string, int> per_host;
  if (rank_list_complete(run.ranks))  // a list shown in part counts neither hosts nor ranks on them
    for (const auto& r : run.ranks) ++per_host[r.host];
  if (!per_host.empty()) {
    run.nnodes = static_cast<int>(per_host.size());
    run.ranks_per_node = 0;
    for (const auto& [host, n] : per_host) run.ranks_per_node = std::max(run.ranks_per_node, n);
    run.nodes_from = "host names";
    if (options.ranks_per_node && *options.ranks_per_node != run.ranks_per_node)
      run.notes.push_back("--ranks-per-node " + std::to_string(*options.ranks_per_node) +
                          " ignored: the log's host names give " + std::to_string(run.ranks_per_node));
  } else if (options.ranks_per_node) {
    run.ranks_per_node = std::min(*options.ranks_per_node, run.nranks);
    run.nnodes = (run.nranks + run.ranks_per_node - 1) / run.ranks_per_node;
    run.nodes_from = "--ranks-per-node";
    run.unknown.push_back("host names (no '# Using devices' lines): nodes from --ranks-per-node");
  } else if (launcher.ranks_per_node || launcher.nnodes) {
    run.ranks_per_node = launcher.ranks_per_node ? *launcher.ranks_per_node
                                                 : (run.nranks + *launcher.nnodes - 1) / *launcher.nnodes;
    run.ranks_per_node = std::min(run.ranks_per_node, run.nranks);
    run.nnodes = (run.nranks + run.ranks_per_node - 1) / run.ranks_per_node;
    run.nodes_from = "command line";
    run.unknown.push_back("host names: nodes taken from the launcher's command line");
  } else if (!run.collectives.empty()) {
    // A collective's figures stand without the node split; only a consumer that splits intra-
    // from inter-node needs it, and it refuses the group, naming the flag.
    run.nnodes = 0;
    run.ranks_per_node = 0;
    run.nodes_from = "unknown";
    run.unknown.push_back("ranks per node (no host names, no launcher counts): nnodes, ranks_per_node and "
                          "spans_nodes are left empty; an export that splits intra- from inter-node refuses this "
                          "group: " + std::string(calibration::kNodesUnknownRemedy));
  } else {
    throw ImportError(run.source_file, line,
                      "ranks per node unknown (the log names no hosts and no launcher counts); pass "
                      "--ranks-per-node N");
  }
}

// The device name the ranks report most; --device fills it in where they report none, and is
// refused where they report another.
void resolve_device(ImportedRun& run, const ImportOptions& options, int line) {
  std::map<std::string, int> names;
  for (const auto& r : run.ranks)
    if (!trim(r.device_name).empty()) ++names[trim(r.device_name)];
  if (names.empty()) {
    run.device = options.device;
    run.unknown.push_back(options.device.empty() ? "device name (pass --device NAME)" : "device name: from --device");
    return;
  }
  run.device = std::max_element(names.begin(), names.end(), [](const auto& a, const auto& b) {
                 return a.second < b.second;
               })->first;
  if (!options.device.empty() && !names.count(options.device))
    throw ImportError(run.source_file, line,
                      "--device '" + options.device + "' contradicts the log: its ranks report '" + run.device +
                          "' (drop --device, or import this log apart)");
  if (names.size() > 1) run.notes.push_back("ranks report " + std::to_string(names.size()) + " device names");
}

}  // namespace

void resolve_topology(ImportedRun& run, const ImportOptions& options, int line) {
  if (!options.collective.empty() && run.collective != options.collective)
    throw ImportError(run.source_file, line,
                      "--collective " + options.collective + " contradicts the log: this table measured " +
                          (run.collective.empty() ? run.p2p_pattern + " (point-to-point)" : run.collective) +
                          " (drop --collective, or import this log apart)");
  const LauncherCounts launcher = parse_launcher(run.command_line);
  resolve_ranks(run, options, launcher, line);
  resolve_nodes(run, options, launcher, line);
  resolve_device(run, options, line);
}

void check_printed_bandwidths(const ImportedRun& run, bool time_is_cputime) {
  if (run.collective == "hypercube") return;  // nccl-tests prints its algbw equal to busbw
  const double factor = bus_factor(run.collective, run.nranks);
  for (const auto& p : run.collectives) {
    if (p.algbw_gbps && !time_is_cputime) {
      // S / t over the time's printed interval against the printed algbw's interval.
      const double t_low = p.time_us - p.time_half_unit, t_high = p.time_us + p.time_half_unit;
      const double low = p.size_bytes / t_high / 1e3;
      const double high = t_low > 0 ? p.size_bytes / t_low / 1e3 : std::numeric_limits<double>::infinity();
      const double eps = 1e-9 * std::max(1.0, *p.algbw_gbps);
      if (*p.algbw_gbps + p.algbw_half_unit < low - eps || *p.algbw_gbps - p.algbw_half_unit > high + eps)
        throw ImportError(run.source_file, p.line,
                          "algbw " + std::to_string(*p.algbw_gbps) + " GB/s does not match size/time = " +
                              std::to_string(p.size_bytes / p.time_us / 1e3) + " GB/s (a corrupted row?)");
    }
    if (!busbw_fits(p, factor))
      throw ImportError(run.source_file, p.line,
                        "busbw/algbw = " + std::to_string(*p.busbw_gbps / *p.algbw_gbps) + " but " + run.collective +
                            "'s bus factor at " + std::to_string(run.nranks) + " ranks is " + std::to_string(factor) +
                            ", beyond the printed digits' rounding (is the rank count right? it came from the " +
                            run.nranks_from + ")");
  }
}

}  // namespace gpucal::calibration
