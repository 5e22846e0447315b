// nccl-tests and rccl-tests text output. What this reader knows of the format (nccl-tests 2.x
// src/common.cu and util.cu, rccl-tests src/common.cu):
//   # nccl-tests version 2.18.3 nccl-headers=23004 nccl-library=23004      (2.17+)
//   # Collective test starting: all_reduce_perf                             (2.17+)
//   # nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 ...
//   rccl-tests: Version develop:5272cd1                                     (rccl-tests)
//   # Using devices
//   #  Rank  0 Group  0 Pid  1234 on host device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
//   NCCL version 2.26.2+cuda12.8 / RCCL version : ... / HIP version : ...
//   #     out-of-place    in-place          (or "in-place" alone: rccl-tests -O 0)
//   # size count type redop root time algbw busbw #wrong time algbw busbw #wrong [timestamp]
//     ("cputime" with -C 1; "error" for #wrong and no redop/root columns in old versions;
//      i_min i_max i_p99 i_cv% after each block with -I 1)
//   data rows; "# Testing N cycle." between cycles (rccl-tests -N); footer "# Avg bus bandwidth".
// Launcher prefixes are already gone (import_text.cpp). Other lines (NCCL INFO, MPI warnings,
// shell prompts) are skipped and counted.
#include <algorithm>
#include <map>
#include <regex>

#include "app/import/import_numbers.h"
#include "app/import/import_parsers.h"
#include "core/formulas/collectives.h"

namespace gpucal::calibration {

namespace {

const std::regex kToolVersion(R"(^#\s*(nccl|rccl)-tests version\s+(\S+))");
const std::regex kStarting(R"(^#\s*Collective test starting:\s*(\S+))");
const std::regex kThreads(R"(^#\s*nThread\s+\d+\s+nGpus\s+\d+\s+minBytes\s+\d+)");
const std::regex kRcclVersion(R"(^rccl-tests:\s*Version\s+(\S+))");
const std::regex kRankLine(
    R"(^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$)");
const std::regex kLibraryLine(R"(^(NCCL version|RCCL version|HIP version|ROCm version|Librccl path)\b.*)");
const std::regex kCycle(R"(^#\s*Testing\s+(\d+)\s+cycle)");
const std::regex kFooter(R"(^#\s*(Out of bounds values|Avg bus bandwidth|Collective test concluded)\b)");
const std::regex kNcclTestsProgram(R"((^|[\s/])[A-Za-z0-9_]+_perf(_mpi)?(\s|$))");
// A wrapper script's command line that names the collective with a word of its own
// (`run_nccl_tests.sh -t all_gather ...`, `--collective allreduce`): the word after -t, --test,
// --collective, --coll or --op (nccl-tests' own -t takes a number, which is no collective).
const std::regex kWrapperCollective(
    R"((^|\s)(-t|--test|--collective|--coll|--op)[\s=]+([A-Za-z_-]+)(\s|$))");
// "NCCL INFO comm 0x... rank 0 nranks 16 cudaDev 0 ..." / "... rank 0 nRanks 16 nNodes 2 ...".
const std::regex kInfoRanks(R"(NCCL INFO .*\bn[Rr]anks (\d+))");

struct Block {
  bool in_place = false;
  int time = -1, algbw = -1, busbw = -1, wrong = -1;  // token positions in a data row
};

struct Layout {
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  std::vector<Block> blocks;
  int fields = 0;          // tokens a row has (before an optional timestamp)
  bool timestamp = false;  // -S 1: a date and a time follow
  bool cputime = false;    // -C 1: the time columns are CPU time
  int line = 0;
};

// The column header: "# size count type redop root time algbw busbw #wrong time ...".
Layout parse_layout(const std::string& path, const LogLine& line, const std::string& group_line) {
  std::vector<std::string> names = split_whitespace(line.text.substr(1));
  Layout l;
  l.line = line.number;
  std::size_t i = 0;
  for (; i < names.size() && names[i] != "time" && names[i] != "cputime"; ++i) {
    const std::string& n = names[i];
    int* slot = n == "size"    ? &l.size
                : n == "count" ? &l.count
                : n == "type"  ? &l.type
                : n == "redop" ? &l.redop
                : n == "root"  ? &l.root
                               : nullptr;
    if (!slot) throw ImportError(path, line.number, "unrecognized column '" + n + "' in the column header");
    *slot = static_cast<int>(i);
  }
  if (l.size < 0 || l.count < 0 || l.type < 0)
    throw ImportError(path, line.number, "column header without size, count and type columns");
  while (i < names.size() && (names[i] == "time" || names[i] == "cputime")) {
    if (i + 3 >= names.size() || names[i + 1] != "algbw" || names[i + 2] != "busbw" ||
        (names[i + 3] != "#wrong" && names[i + 3] != "error"))
      throw ImportError(path, line.number,
                        "column header: expected 'time algbw busbw #wrong' after '" + names[i] + "'");
    l.cputime = names[i] == "cputime";
    Block b;
    b.time = static_cast<int>(i);
    b.algbw = b.time + 1;
    b.busbw = b.time + 2;
    b.wrong = b.time + 3;
    i += 4;
    if (i < names.size() && names[i] == "i_min") i += 4;  // -I 1: i_min i_max i_p99 i_cv%
    l.blocks.push_back(b);
  }
  if (i < names.size() && names[i] == "timestamp") {
    l.timestamp = true;
    ++i;
  }
  if (i != names.size() || l.blocks.empty() || l.blocks.size() > 2)
    throw ImportError(path, line.number,
                      "unrecognized column header (" + std::to_string(names.size()) + " columns)");
  l.fields = static_cast<int>(i - (l.timestamp ? 1 : 0));
  // The line above names the blocks; nccl-tests always prints both, rccl-tests -O 0 only in-place.
  const bool says_out = group_line.find("out-of-place") != std::string::npos;
  if (l.blocks.size() == 2) {
    l.blocks[1].in_place = true;
  } else {
    l.blocks[0].in_place = !says_out;
  }
  return l;
}

std::optional<int64_t> parse_wrong(const std::string& token, bool& not_validated) {
  std::string t = token;
  while (!t.empty() && t.back() == '*') t.pop_back();  // rccl-tests marks errors over its threshold
  if (t == "N/A") {
    not_validated = true;
    return std::nullopt;
  }
  if (auto n = parse_integer(t); n && *n >= 0 && *n <= kMaxSizeBytes) return *n;
  // Old versions print the error as a number (0e+00); below 1 it counts no wrong element.
  if (auto d = parse_number(t); d && *d >= 0 && *d <= static_cast<double>(kMaxSizeBytes)) return static_cast<int64_t>(*d);
  return std::nullopt;
}

class TextReader {
 public:
  TextReader(const std::string& path, const std::vector<LogLine>& lines, const ImportOptions& options)
      : path_(path), lines_(lines), options_(options) {}

  std::vector<ImportedRun> read() {
    choose_primary_rank();
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      const LogLine& line = lines_[i];
      if (line.tag_rank >= 0 && line.tag_rank != primary_rank_) {
        ++skipped_;
        continue;
      }
      handle(i, line);
    }
    finish_run(lines_.size());
    if (runs_.empty())
      throw ImportError(path_, lines_.empty() ? 1 : lines_.front().number,
                        "no nccl-tests/rccl-tests table (no column header) in this file");
    return std::move(runs_);
  }

 private:
  // Under mpirun --tag-output every rank may print; the table comes from the rank that prints
  // the header (rank 0 in nccl-tests).
  void choose_primary_rank() {
    for (const auto& l : lines_)
      if (l.tag_rank >= 0 && (std::regex_search(l.text, kThreads) || is_column_header(l.text))) {
        primary_rank_ = l.tag_rank;
        return;
      }
  }

  static bool is_column_header(const std::string& text) {
    if (text.empty() || text[0] != '#') return false;
    const auto names = split_whitespace(text.substr(1));
    return names.size() >= 5 && names[0] == "size" && names[1] == "count" && names[2] == "type";
  }

  ImportedRun& current(std::size_t index) {
    if (!run_) {
      run_ = ImportedRun{};
      run_->source_file = path_;
      run_->first_line = lines_[index].number;
      run_->format = "nccl-tests";
      run_->impl = "nccl-tests";
      run_->backend = "cuda";
      run_start_ = index;
    }
    return *run_;
  }

  // A header line after rows (or a second nThread line) starts the next run.
  void begin_section(std::size_t index) {
    if (run_ && (has_rows_ || seen_threads_)) finish_run(index);
  }

  void handle(std::size_t index, const LogLine& line) {
    const std::string& text = line.text;
    std::smatch m;
    if (std::regex_search(text, m, kToolVersion)) {
      begin_section(index);
      ImportedRun& r = current(index);
      r.tool_version = m[1].str() + "-tests " + m[2].str();
      if (m[1] == "rccl") {
        r.format = r.impl = "rccl-tests";
        r.backend = "hip";
      }
    } else if (std::regex_search(text, m, kStarting)) {
      if (run_ && (has_rows_ || seen_threads_ || !run_->program.empty())) finish_run(index);
      current(index).program = m[1];
    } else if (std::regex_search(text, kThreads)) {
      begin_section(index);
      seen_threads_ = true;
      parse_thread_header(current(index), line);
    } else if (std::regex_search(text, m, kRcclVersion)) {
      if (run_ && has_rows_) finish_run(index);
      ImportedRun& r = current(index);
      r.format = r.impl = "rccl-tests";
      r.backend = "hip";
      r.tool_version = "rccl-tests " + m[1].str();
    } else if (std::regex_search(text, m, kRankLine)) {
      if (run_ && has_rows_) finish_run(index);
      const int rank = static_cast<int>(whole_field({path_, line.number, "rank"}, m[1], 0, kMaxRanks - 1));
      const int device = static_cast<int>(whole_field({path_, line.number, "device"}, m[3], 0, kMaxDeviceIndex));
      current(index).ranks.push_back({rank, m[2], device, m[4], m[5]});
      current(index).hardware_lines.push_back(trim(text));
    } else if (std::regex_search(text, kLibraryLine)) {
      if (run_) run_->hardware_lines.push_back(trim(text));
    } else if (std::regex_search(text, m, kCycle)) {
      cycle_ = static_cast<int>(whole_field({path_, line.number, "cycle"}, m[1], 1, kMaxCycles)) - 1;
    } else if (std::regex_search(text, kFooter)) {
      table_.reset();
      table_end_ = index + 1;
      if (run_) run_->notes.push_back("line " + std::to_string(line.number) + ": " + trim(text.substr(1)));
    } else if (is_column_header(text)) {
      if (run_ && has_rows_) finish_run(index);
      current(index);
      table_ = parse_layout(path_, line, group_line_);
      columns_ = {table_->redop >= 0, table_->root >= 0};
      if (table_->cputime) run_->notes.push_back("times are CPU time (-C 1), not GPU time");
    } else if (!text.empty() && text[0] == '#') {
      if (text.find("in-place") != std::string::npos)
        group_line_ = text;
      else if (text.find("Reducing maxBytes") != std::string::npos && run_)
        run_->notes.push_back(trim(text.substr(1)));
    } else if (table_ && !split_whitespace(text).empty() && is_integer_token(split_whitespace(text)[0])) {
      parse_row(index, line);
      table_end_ = index + 1;
    } else if (!trim(text).empty()) {
      ++skipped_;
      note_info_nranks(text);
    }
  }

  // NCCL INFO lines name the communicator's rank count; two different counts say nothing.
  void note_info_nranks(const std::string& text) {
    std::smatch m;
    if (!std::regex_search(text, m, kInfoRanks)) return;
    const auto n = parse_integer(m[1]);
    if (!n || *n < 1 || *n > kMaxRanks) return;
    info_nranks_ = info_nranks_ == 0 || info_nranks_ == *n ? static_cast<int>(*n) : -1;
  }

  // The rank count the log gives before the topology is resolved (the collective may need it).
  int nranks_hint(ImportedRun& run) const {
    if (rank_list_complete(run.ranks)) return static_cast<int>(run.ranks.size());
    if (info_nranks_ > 0) {
      run.nranks = info_nranks_;
      run.nranks_from = "NCCL INFO line ('nranks')";
      return info_nranks_;
    }
    if (options_.nranks) return *options_.nranks;
    return parse_launcher(run.command_line).nranks.value_or(0);
  }

  // No *_perf program in sight: a wrapper's command line above the run that names a collective.
  void collective_from_wrapper(ImportedRun& run) {
    const std::string line = find_command_line(lines_, previous_end_, run_start_ + 1, kWrapperCollective);
    std::smatch m;
    if (line.empty() || !std::regex_search(line, m, kWrapperCollective)) return;
    const CollectiveInfo* c = find_collective(m[3].str());
    if (!c) return;
    if (run.command_line.empty()) run.command_line = line;
    wrapper_collective_ = std::string(c->name);
    wrapper_word_ = m[2].str() + " " + m[3].str();
  }

  // The program's name where the log gives one, else a wrapper's word, else the table's own
  // evidence.
  void name_collective(ImportedRun& run, bool named_by_header) {
    run.collective = collective_from_program(run.program);
    if (run.collective.empty() && !wrapper_collective_.empty()) {
      run.collective = wrapper_collective_;
      run.collective_from = "the command line's '" + wrapper_word_ + "'";
      wrapper_collective_.clear();
    } else if (!run.collective.empty()) {
      run.collective_from = named_by_header ? "'# Collective test starting' line" : "command line";
    } else if (run.program.find("alltoallv") != std::string::npos) {
      throw ImportError(path_, run.first_line, "alltoallv_perf has no fixed size convention; not imported");
    } else if (!run.program.empty()) {
      throw ImportError(path_, run.first_line, "'" + run.program + "' is not an nccl-tests collective");
    }
    settle_collective(run, columns_, options_, nranks_hint(run));
  }

  void parse_thread_header(ImportedRun& run, const LogLine& line) {
    const auto t = split_whitespace(line.text);
    for (std::size_t k = 0; k + 1 < t.size(); ++k) {
      const FieldAt at{path_, line.number, "'" + t[k] + "'"};
      if (t[k] == "iters:" && k > 0 && t[k - 1] != "warmup" && t[k - 1] != "agg")
        iterations_ = whole_field(at, t[k + 1], 0, kMaxIterations);
      if (t[k] == "graph:") run.graph = whole_field(at, t[k + 1], 0, kMaxIterations) > 0;
      if (t[k] == "validation:") run.validated = whole_field(at, t[k + 1], 0, kMaxIterations) != 0;
    }
    run.hardware_lines.push_back(trim(line.text));
  }

  void parse_row(std::size_t index, const LogLine& line) {
    const auto t = split_whitespace(line.text);
    const Layout& l = *table_;
    const int need = l.fields + (l.timestamp ? 1 : 0);
    if (static_cast<int>(t.size()) < need) {
      if (is_last_content_line(index)) {
        run_->notes.push_back("line " + std::to_string(line.number) + ": the log ends mid-row (" +
                              std::to_string(t.size()) + " of " + std::to_string(l.fields) +
                              " fields); that row is dropped");
        return;
      }
      throw ImportError(path_, line.number,
                        "data row has " + std::to_string(t.size()) + " fields, the column header at line " +
                            std::to_string(l.line) + " has " + std::to_string(l.fields));
    }
    if (!l.timestamp && static_cast<int>(t.size()) > l.fields)
      throw ImportError(path_, line.number,
                        "data row has " + std::to_string(t.size()) + " fields, the column header at line " +
                            std::to_string(l.line) + " has " + std::to_string(l.fields));
    const int n = line.number;
    const int64_t size = size_field({path_, n, "column 'size'"}, t[l.size]);
    const int64_t count = whole_field({path_, n, "column 'count'"}, t[l.count], 0, std::max<int64_t>(size, 0));
    has_rows_ = true;
    if (size == 0) {
      ++zero_rows_;
      return;
    }
    for (const Block& b : l.blocks) {
      CollectivePoint p;
      p.dtype = gpucal_dtype(t[l.type]);
      p.op = l.redop >= 0 && t[l.redop] != "none" ? t[l.redop] : "";
      if (l.root >= 0) p.root = whole_field({path_, n, "column 'root'"}, t[l.root], -1, kMaxRanks - 1);
      p.in_place = b.in_place;
      p.size_bytes = static_cast<double>(size);
      p.printed_count = count;
      p.time_us = time_field({path_, n, "column 'time'"}, t[b.time]);
      p.algbw_gbps = rate_field({path_, n, "column 'algbw'"}, t[b.algbw]);
      p.busbw_gbps = rate_field({path_, n, "column 'busbw'"}, t[b.busbw]);
      p.time_half_unit = half_unit_of_last_digit(t[b.time]);
      p.algbw_half_unit = half_unit_of_last_digit(t[b.algbw]);
      p.busbw_half_unit = half_unit_of_last_digit(t[b.busbw]);
      bool not_validated = false;
      p.wrong = parse_wrong(t[b.wrong], not_validated);
      if (!p.wrong && !not_validated)
        throw ImportError(path_, n, "column '#wrong': expected a count from 0 to 2^50 or N/A, got '" + t[b.wrong] + "'");
      if (not_validated) any_not_validated_ = true;
      p.iterations = iterations_;
      p.cycle = cycle_;
      p.line = n;
      run_->collectives.push_back(p);
    }
  }

  bool is_last_content_line(std::size_t index) const {
    for (std::size_t k = index + 1; k < lines_.size(); ++k)
      if (!trim(lines_[k].text).empty()) return false;
    return true;
  }

  void finish_run(std::size_t end_index) {
    if (!run_) return;
    ImportedRun run = std::move(*run_);
    run_.reset();
    if (!has_rows_) {
      if (!seen_threads_ && run.collectives.empty() && run.ranks.empty()) return;  // stray header lines
      throw ImportError(path_, run.first_line, "no data rows follow this run's header");
    }
    const bool named_by_header = !run.program.empty();
    run.command_line = find_command_line(lines_, previous_end_, run_start_ + 1, kNcclTestsProgram);
    if (run.program.empty() && !run.command_line.empty()) {
      std::smatch m;
      for (const auto& token : split_whitespace(run.command_line))
        if (std::regex_search(token, m, std::regex(R"(([A-Za-z0-9_]+_perf)(_mpi)?$)"))) {
          run.program = m[1];
          break;
        }
    }
    if (run.program.empty()) collective_from_wrapper(run);
    name_collective(run, named_by_header);
    if (zero_rows_ > 0)
      run.notes.push_back(std::to_string(zero_rows_) +
                          " zero-byte row(s) skipped (sizes below one element per rank)");
    if (skipped_ > 0)
      run.notes.push_back(std::to_string(skipped_) + " line(s) that are not part of the table skipped");
    if (any_not_validated_) {
      run.validated = false;
      run.notes.push_back("#wrong is N/A: the run did not validate its results (-c 0)");
    }
    run.rank_combine = "average over ranks (nccl-tests -a 1, the default; -a 3 is the maximum)";
    if (run.command_line.find(" -a 3") != std::string::npos ||
        run.command_line.find("--average 3") != std::string::npos)
      run.rank_combine = "maximum over ranks (-a 3)";
    else if (run.command_line.find(" -a 0") != std::string::npos)
      run.rank_combine = "rank 0's time (-a 0)";
    else if (run.command_line.find(" -a 2") != std::string::npos)
      run.rank_combine = "minimum over ranks (-a 2)";
    if (run.tool_version.empty())
      run.unknown.push_back("nccl-tests version (printed by 2.17 and later only)");
    if (iterations_ == 0) run.unknown.push_back("iterations per measurement (no '# nThread' header)");
    const bool cputime = run.notes.end() != std::find(run.notes.begin(), run.notes.end(),
                                                      "times are CPU time (-C 1), not GPU time");
    resolve_topology(run, options_, run.first_line);
    check_printed_bandwidths(run, cputime);
    runs_.push_back(std::move(run));
    // The next run's command line may sit anywhere after this run's table (a shell prompt
    // between two tables), not only after the line that started the next run.
    previous_end_ = std::max(previous_end_, std::min(end_index, table_end_));
    has_rows_ = seen_threads_ = any_not_validated_ = false;
    zero_rows_ = skipped_ = cycle_ = info_nranks_ = 0;
    iterations_ = 0;
    table_.reset();
    group_line_.clear();
  }

  const std::string& path_;
  const std::vector<LogLine>& lines_;
  const ImportOptions& options_;
  int primary_rank_ = -1;
  std::optional<ImportedRun> run_;
  std::size_t run_start_ = 0, previous_end_ = 0, table_end_ = 0;  // table_end_: past the last row/footer
  std::optional<Layout> table_;
  std::string group_line_;
  bool has_rows_ = false, seen_threads_ = false, any_not_validated_ = false;
  int zero_rows_ = 0, skipped_ = 0, cycle_ = 0;
  int info_nranks_ = 0;  // from NCCL INFO lines; -1 where they disagree
  std::string wrapper_collective_, wrapper_word_;  // a wrapper's command line named the collective
  TableColumns columns_;
  int64_t iterations_ = 0;
  std::vector<ImportedRun> runs_;
};

}  // namespace

std::vector<ImportedRun> parse_nccl_tests_text(const std::string& path, const std::vector<LogLine>& lines,
                                               const ImportOptions& options) {
  return TextReader(path, lines, options).read();
}

bool detects_nccl_tests_text(const std::string& line) {
  static const std::regex kStart(
      R"(^(#\s*nThread\s|#\s*nccl-tests version|#\s*rccl-tests version|#\s*Collective test starting:|rccl-tests:\s*Version|#\s+size\s+count\s+type))");
  return std::regex_search(line, kStart);
}

std::string collective_from_program(const std::string& program) {
  std::string p = program.substr(program.rfind('/') == std::string::npos ? 0 : program.rfind('/') + 1);
  for (const char* suffix : {"_mpi", "_perf"})
    if (p.size() > std::string(suffix).size() &&
        p.compare(p.size() - std::string(suffix).size(), std::string::npos, suffix) == 0)
      p.erase(p.size() - std::string(suffix).size());
  for (const auto& c : collectives())
    if (!c.nccl_tests_name.empty() && c.nccl_tests_name == p) return std::string(c.name);
  return "";
}

}  // namespace gpucal::calibration
