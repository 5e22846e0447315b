// A plain CSV of sizes and times, for tools gpucal has no reader for (a script around
// torch.distributed, a vendor benchmark's exported table): a header line naming size_bytes
// (nccl-tests' S, results/SCHEMA.md) and time_us (one operation, microseconds), optionally
// collective (a name or alias of the collectives registry; else --collective), dtype and
// nranks (else --nranks); other columns are named in the notes and not read. Blank lines and
// lines starting with '#' are skipped. Rows of several collectives or rank counts make one run
// each, in the order they first appear; ranks per node come from --ranks-per-node.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "app/import/import_numbers.h"
#include "app/import/import_parsers.h"
#include "core/formulas/collectives.h"
#include "core/registry/registry.h"

namespace gpucal::calibration {

namespace {

const std::set<std::string> kColumns{"size_bytes", "time_us", "collective", "dtype", "nranks"};

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == ',')
      out.emplace_back();
    else
      out.back() += c;
  }
  for (auto& field : out) field = trim(field);
  return out;
}

// The header's columns by name (lowercased), index of each.
std::map<std::string, std::size_t> header_columns(const std::string& header) {
  std::map<std::string, std::size_t> columns;
  const auto names = split_commas(header);
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string n = names[i];
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
    columns.emplace(n, i);
  }
  return columns;
}

bool content(const LogLine& l) { return !l.text.empty() && l.text[0] != '#'; }

struct CsvReader {
  const std::string& path;
  const ImportOptions& options;
  std::map<std::string, std::size_t> columns;

  std::string cell(const std::vector<std::string>& row, const char* name) const {
    const auto it = columns.find(name);
    return it == columns.end() ? "" : row[it->second];
  }
  std::string collective(const std::vector<std::string>& row, int line) const {
    const std::string name = columns.count("collective") ? cell(row, "collective") : options.collective;
    if (name.empty()) throw ImportError(path, line, "no collective column and no --collective NAME");
    if (const CollectiveInfo* c = find_collective(name)) return std::string(c->name);
    throw ImportError(path, line, registry::unknown_message("collective", name, collective_names()));
  }
  int nranks(const std::vector<std::string>& row, int line) const {
    if (!columns.count("nranks")) return 0;
    return static_cast<int>(whole_field({path, line, "column 'nranks'"}, cell(row, "nranks"), 1, kMaxRanks));
  }
  CollectivePoint point(const std::vector<std::string>& row, int line) const {
    CollectivePoint p;
    p.line = line;
    p.size_bytes = static_cast<double>(size_field({path, line, "column 'size_bytes'"}, cell(row, "size_bytes")));
    p.time_us = time_field({path, line, "column 'time_us'"}, cell(row, "time_us"));
    p.dtype = cell(row, "dtype").empty() ? "" : gpucal_dtype(cell(row, "dtype"));
    return p;
  }
  ImportedRun run_for(const std::string& collective, int nranks, int header_line) const {
    ImportedRun run;
    run.source_file = path;
    run.first_line = header_line;
    run.format = run.impl = "csv";
    run.collective = collective;
    run.collective_from = columns.count("collective") ? "column 'collective'" : "--collective";
    run.nranks = nranks;
    run.nranks_from = nranks > 0 ? "column 'nranks'" : "";
    run.validated = false;
    run.rank_combine = "as the file gives it";
    run.unknown.push_back("how time_us was made (mean or median, over which ranks and iterations)");
    for (const auto& [name, index] : columns)
      if (!kColumns.count(name)) run.notes.push_back("column '" + name + "' not read");
    return run;
  }
};

}  // namespace

bool detects_size_time_csv(const std::string& line) {
  const auto columns = header_columns(line);
  return columns.count("size_bytes") > 0 && columns.count("time_us") > 0;
}

std::vector<ImportedRun> parse_size_time_csv(const std::string& path, const std::vector<LogLine>& lines,
                                             const ImportOptions& options) {
  const auto header = std::find_if(lines.begin(), lines.end(), content);
  if (header == lines.end() || !detects_size_time_csv(header->text))
    throw ImportError(path, header == lines.end() ? 0 : header->number,
                      "no CSV header naming size_bytes and time_us");
  const CsvReader reader{path, options, header_columns(header->text)};
  const std::size_t fields = split_commas(header->text).size();
  std::vector<ImportedRun> runs;
  std::map<std::pair<std::string, int>, std::size_t> run_of;  // (collective, nranks) -> index in runs
  for (auto l = header + 1; l != lines.end(); ++l) {
    if (!content(*l)) continue;
    const auto row = split_commas(l->text);
    if (row.size() != fields)
      throw ImportError(path, l->number, std::to_string(row.size()) + " fields, the header has " + std::to_string(fields));
    const std::pair<std::string, int> key{reader.collective(row, l->number), reader.nranks(row, l->number)};
    const auto [it, fresh] = run_of.emplace(key, runs.size());
    if (fresh) runs.push_back(reader.run_for(key.first, key.second, header->number));
    runs[it->second].collectives.push_back(reader.point(row, l->number));
  }
  if (runs.empty()) throw ImportError(path, header->number, "a header and no rows");
  for (auto& run : runs) resolve_topology(run, options, run.first_line);
  return runs;
}

}  // namespace gpucal::calibration
