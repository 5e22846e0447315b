#include "app/common/csv_table.h"
#include "core/output/file_io.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpucal::calibration {

namespace {

// Splits RFC 4180 text into records; records[i] starts at record_lines[i] (1-based). A
// final data record without its line end is torn (the writer was killed mid-line, or the
// disk filled): it is dropped and `torn` says where, since even a record with every field
// may end in a cut number. Our writers end every record, the header included.
void split_records(const std::string& text, const std::string& source,
                   std::vector<std::vector<std::string>>& records,
                   std::vector<std::size_t>& record_lines, std::string& torn) {
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false, field_was_quoted = false, record_has_content = false;
  std::size_t line = 1, record_line = 1;
  auto end_field = [&] {
    record.push_back(field);
    field.clear();
    field_was_quoted = false;
  };
  auto end_record = [&] {
    end_field();
    // A blank line (one empty unquoted field) is not a record.
    if (!(record.size() == 1 && record[0].empty() && !record_has_content)) {
      records.push_back(record);
      record_lines.push_back(record_line);
    }
    record.clear();
    record_has_content = false;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      if (!field.empty() || field_was_quoted)
        throw CsvError(source + ":" + std::to_string(line) +
                       ": quote inside an unquoted field (RFC 4180 wants the whole field quoted)");
      in_quotes = field_was_quoted = record_has_content = true;
    } else if (c == ',') {
      end_field();
      record_has_content = true;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      // CRLF: the LF ends the record.
    } else if (c == '\n') {
      end_record();
      record_line = ++line;
    } else {
      if (field_was_quoted)
        throw CsvError(source + ":" + std::to_string(line) +
                       ": text after a closing quote in a quoted field");
      field += c;
      record_has_content = true;
    }
  }
  const bool unfinished = in_quotes || !field.empty() || !record.empty() || record_has_content;
  if (!unfinished) return;
  // A quoted field open across line ends is a malformed file, not a cut last line.
  if (in_quotes && line != record_line)
    throw CsvError(source + ":" + std::to_string(record_line) + ": unterminated quoted field");
  if (records.empty() && !in_quotes) {
    end_record();  // a header without its line end still names the columns
    return;
  }
  torn = source + ":" + std::to_string(record_line) +
         ": last line has no line end (its writer was interrupted); dropped";
}

}  // namespace

CsvTable CsvTable::read_file(const std::string& path) {
  if (const std::string why = not_a_regular_file(path); !why.empty()) throw CsvError(path + ": " + why);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CsvError(path + ": cannot open");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse(buffer.str(), path);
}

CsvTable CsvTable::parse(const std::string& text, const std::string& source_name) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::size_t> lines;
  std::string torn;
  split_records(text, source_name, records, lines, torn);
  if (records.empty()) throw CsvError(source_name + ": empty file (no header row)");
  CsvTable table;
  table.source_ = source_name;
  if (!torn.empty()) table.warnings_.push_back(torn);
  table.columns_ = records[0];
  for (std::size_t c = 0; c < table.columns_.size(); ++c) {
    const std::string& name = table.columns_[c];
    if (name.empty()) throw CsvError(source_name + ":1: empty column name at position " + std::to_string(c + 1));
    if (!table.index_.emplace(name, c).second)
      throw CsvError(source_name + ":1: duplicate column '" + name + "'");
  }
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.columns_.size())
      throw CsvError(source_name + ":" + std::to_string(lines[r]) + ": " +
                     std::to_string(records[r].size()) + " fields, header has " +
                     std::to_string(table.columns_.size()));
    table.rows_.push_back(std::move(records[r]));
    table.row_lines_.push_back(lines[r]);
  }
  return table;
}

std::size_t CsvTable::column_index(const std::string& column) const {
  auto it = index_.find(column);
  if (it == index_.end()) throw CsvError(source_ + ": no column '" + column + "'");
  return it->second;
}

void CsvTable::fail_field(std::size_t row, const std::string& column, const std::string& what) const {
  throw CsvError(source_ + ":" + std::to_string(line_of(row)) + ": column '" + column + "': " + what);
}

const std::string& CsvTable::get_string(std::size_t row, const std::string& column) const {
  return rows_.at(row)[column_index(column)];
}

std::string CsvTable::get_string_or(std::size_t row, const std::string& column,
                                    const std::string& fallback) const {
  return has_column(column) ? get_string(row, column) : fallback;
}

std::optional<double> CsvTable::get_optional_double(std::size_t row, const std::string& column) const {
  if (!has_column(column)) return std::nullopt;
  const std::string& text = get_string(row, column);
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isnan(value))
    fail_field(row, column, "'" + text + "' is not a number");
  if (errno == ERANGE)  // strtod's overflow, or an underflow to a subnormal or zero
    fail_field(row, column, "'" + text + "' is out of range (" +
                                (std::fabs(value) > 1 ? "beyond the largest double" : "too small to hold in a double") +
                                ")");
  return value;
}

double CsvTable::get_double(std::size_t row, const std::string& column) const {
  column_index(column);  // absent column is its own error
  auto value = get_optional_double(row, column);
  if (!value) fail_field(row, column, "empty, a number is required");
  return *value;
}

int64_t CsvTable::get_int(std::size_t row, const std::string& column) const {
  const std::string& text = get_string(row, column);
  if (text.empty()) fail_field(row, column, "empty, an integer is required");
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + text.size() || errno == ERANGE)
    fail_field(row, column, "'" + text + "' is not an integer");
  return value;
}

void CsvTable::require_columns(const std::vector<std::string>& required) const {
  std::string missing;
  for (const auto& column : required)
    if (!has_column(column)) missing += (missing.empty() ? "" : ", ") + column;
  if (!missing.empty()) throw CsvError(source_ + ": missing column(s) " + missing);
}

std::map<std::string, std::vector<double>> read_samples_file(const std::string& path,
                                                            std::vector<std::string>* warnings) {
  const CsvTable table = CsvTable::read_file(path);
  if (warnings) warnings->insert(warnings->end(), table.warnings().begin(), table.warnings().end());
  table.require_columns({"point", "time_us"});
  std::map<std::string, std::vector<double>> samples;
  for (std::size_t r = 0; r < table.row_count(); ++r) {
    const double t = table.get_double(r, "time_us");
    if (!std::isfinite(t) || t < 0)
      throw CsvError(path + ":" + std::to_string(table.line_of(r)) + ": column 'time_us': '" +
                     table.get_string(r, "time_us") + "' is not a sample time (finite, not negative)");
    samples[table.get_string(r, "point")].push_back(t);
  }
  return samples;
}

}  // namespace gpucal::calibration
